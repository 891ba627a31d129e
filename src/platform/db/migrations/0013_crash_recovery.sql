CREATE TABLE "job_attempts" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"job_name" text NOT NULL,
	"process_id" char(24),
	"started_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_processes" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"role" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "history" ADD COLUMN "process_id" char(24);--> statement-breakpoint
CREATE INDEX "job_attempts_process_idx" ON "job_attempts" USING btree ("process_id");