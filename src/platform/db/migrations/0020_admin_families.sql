CREATE TABLE "questions" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"assistant_id" char(24),
	"text" text NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"created_by" char(24),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"contact_email" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "questions" ADD CONSTRAINT "questions_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "questions_institution_position_idx" ON "questions" USING btree ("institution_id","position","created_at");--> statement-breakpoint
-- Twins grouped before accounts had rows of their own keep their grouping: one account per id already named.
INSERT INTO "accounts" ("id", "name") SELECT DISTINCT "account_id", 'Account ' || "account_id" FROM "institutions" WHERE "account_id" IS NOT NULL;
