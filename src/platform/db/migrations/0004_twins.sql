CREATE TABLE "credit_ledger" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24),
	"account" text NOT NULL,
	"user_id" char(24),
	"delta" numeric(18, 6) NOT NULL,
	"balance_after" numeric(18, 6) NOT NULL,
	"reason" text NOT NULL,
	"actor_id" char(24),
	"meta" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entitlements" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24),
	"account_id" char(24),
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"models" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tools" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"features" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"caps" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" char(24),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "guardrails_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "guardrails_text" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "long_term_memory_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "memory_admins_only" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "default_memory_mode" text DEFAULT 'session' NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "reasoning_effort" text DEFAULT 'medium' NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "user_daily_limit" integer;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "twin_daily_limit" integer;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "embed_guidance_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "embed_transcript_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "credit_ledger_institution_idx" ON "credit_ledger" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE INDEX "credit_ledger_user_idx" ON "credit_ledger" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "entitlements_institution_idx" ON "entitlements" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE INDEX "entitlements_account_idx" ON "entitlements" USING btree ("account_id");--> statement-breakpoint
ALTER TABLE "institutions" ADD CONSTRAINT "institutions_credits_nonnegative" CHECK ("institutions"."credits" >= 0);--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_credits_nonnegative" CHECK ("users"."credits" >= 0);