CREATE TABLE "sessions" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"user_id" char(24) NOT NULL,
	"institution_id" char(24),
	"kind" text DEFAULT 'full' NOT NULL,
	"ip" text DEFAULT '' NOT NULL,
	"user_agent" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "institutions" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"ainame" text DEFAULT '' NOT NULL,
	"picture" text DEFAULT '' NOT NULL,
	"picture_bg" text DEFAULT '' NOT NULL,
	"picture_animated" text DEFAULT '' NOT NULL,
	"picture_dark_bg" text DEFAULT '' NOT NULL,
	"about" text DEFAULT '' NOT NULL,
	"voice_agent_id" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"allow_joining" text DEFAULT 'closed' NOT NULL,
	"joining_admin_only" boolean DEFAULT false NOT NULL,
	"rt_voice" text DEFAULT '' NOT NULL,
	"question_type" text DEFAULT '' NOT NULL,
	"credits" numeric(18, 6) DEFAULT 0 NOT NULL,
	"credits_used" numeric(18, 6) DEFAULT 0 NOT NULL,
	"credit_award" numeric(18, 6) DEFAULT 0 NOT NULL,
	"pool_credits" boolean DEFAULT false NOT NULL,
	"max_completion_tokens" integer DEFAULT 4096 NOT NULL,
	"max_files" integer DEFAULT 100 NOT NULL,
	"disable_file_upload_for_user" boolean DEFAULT false NOT NULL,
	"personalisation_asked" boolean DEFAULT false NOT NULL,
	"location_enabled" boolean DEFAULT false NOT NULL,
	"rt_enabled" boolean DEFAULT false NOT NULL,
	"rt_admin_only" boolean DEFAULT false NOT NULL,
	"display_agent_details" boolean DEFAULT false NOT NULL,
	"disable_assistants_for_user" boolean DEFAULT false NOT NULL,
	"public_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"public_authorized_urls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"invoices_urls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tools_disabled" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"lti_context_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"assistants_disabled" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"contact_email" text DEFAULT '' NOT NULL,
	"account_id" char(24),
	"cloud_services" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"role" text DEFAULT 'user' NOT NULL,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"password_hash" text,
	"fname" text DEFAULT '' NOT NULL,
	"lname" text DEFAULT '' NOT NULL,
	"picture" text DEFAULT '' NOT NULL,
	"account_type" text DEFAULT 'user' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"credits" numeric(18, 6) DEFAULT 0 NOT NULL,
	"credits_used" numeric(18, 6) DEFAULT 0 NOT NULL,
	"current_institution_id" char(24),
	"external" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"trial_end" timestamp with time zone,
	"current_period_end" timestamp with time zone,
	"trial_used" boolean DEFAULT false NOT NULL,
	"cancel_at_period_end" boolean DEFAULT false NOT NULL,
	"referral_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"reset_code_id" uuid,
	"referrer_paid" boolean DEFAULT false NOT NULL,
	"invoices_urls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"use_location" boolean DEFAULT false NOT NULL,
	"pin_ui" boolean DEFAULT false NOT NULL,
	"dark_mode" boolean DEFAULT false NOT NULL,
	"browser_voice" text DEFAULT '' NOT NULL,
	"rt_voice" text DEFAULT '' NOT NULL,
	"remember_history_count" integer DEFAULT 10 NOT NULL,
	"max_dialogues" integer DEFAULT 0 NOT NULL,
	"user_memory_enabled" boolean DEFAULT true NOT NULL,
	"voice_assistant_id" char(24),
	"favorite_assistants" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"mfa_enabled" boolean DEFAULT false NOT NULL,
	"mfa_method" text,
	"must_change_password" boolean DEFAULT false NOT NULL,
	"totp_secret_sealed" text,
	"totp_pending_sealed" text,
	"totp_last_step" bigint,
	"version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_institution_idx" ON "sessions" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "institutions_public_id_key" ON "institutions" USING btree ("public_id");--> statement-breakpoint
CREATE INDEX "institutions_account_idx" ON "institutions" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_institution_user_key" ON "memberships" USING btree ("institution_id","user_id");--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_live_key" ON "users" USING btree (lower("email")) WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "users_current_institution_idx" ON "users" USING btree ("current_institution_id");