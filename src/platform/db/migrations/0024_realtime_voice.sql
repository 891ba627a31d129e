CREATE TABLE "rt_sessions" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"auth_session_id" char(24) NOT NULL,
	"caller" jsonb NOT NULL,
	"assistant_id" char(24),
	"voice" text NOT NULL,
	"model" text NOT NULL,
	"token_hash" text,
	"token_expires_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"end_reason" text,
	"conversation_id" char(24),
	"record_id" char(24),
	"process_id" char(24),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "history" ADD COLUMN "mode" text DEFAULT 'chat' NOT NULL;--> statement-breakpoint
ALTER TABLE "rt_sessions" ADD CONSTRAINT "rt_sessions_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rt_sessions_token_idx" ON "rt_sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "rt_sessions_status_idx" ON "rt_sessions" USING btree ("status");