CREATE TABLE "assistants" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24),
	"user_id" char(24),
	"system_key" text,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"instructions" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"argument_1" text DEFAULT '' NOT NULL,
	"argument_2" text DEFAULT '' NOT NULL,
	"argument_3" text DEFAULT '' NOT NULL,
	"argument_4" text DEFAULT '' NOT NULL,
	"argument_5" text DEFAULT '' NOT NULL,
	"picture_url" text DEFAULT '' NOT NULL,
	"admin_only" boolean DEFAULT false NOT NULL,
	"editable_others" boolean DEFAULT false NOT NULL,
	"institution_shared" boolean DEFAULT false NOT NULL,
	"account_shared" boolean DEFAULT false NOT NULL,
	"rag_enabled" boolean DEFAULT false NOT NULL,
	"bypass_system_context" boolean DEFAULT false NOT NULL,
	"remember_history" integer DEFAULT 0 NOT NULL,
	"conversation_model" text DEFAULT '' NOT NULL,
	"sts_conversation_model" text DEFAULT '' NOT NULL,
	"assistant_tool_mode" text DEFAULT 'auto' NOT NULL,
	"sts_reasoning_effort" text,
	"liked_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "custom_models" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24),
	"name" text NOT NULL,
	"model" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"provider" text DEFAULT 'openai' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"max_tokens" integer DEFAULT 4096 NOT NULL,
	"context_window" integer DEFAULT 128000 NOT NULL,
	"base_url" text DEFAULT '' NOT NULL,
	"api_key_sealed" text,
	"min_reasoning_effort" text,
	"input_price_per_1k" numeric(18, 6) DEFAULT 0 NOT NULL,
	"output_price_per_1k" numeric(18, 6) DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "assistants_institution_status_idx" ON "assistants" USING btree ("institution_id","status");--> statement-breakpoint
CREATE INDEX "assistants_user_idx" ON "assistants" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "assistants_system_key_key" ON "assistants" USING btree ("system_key");--> statement-breakpoint
CREATE UNIQUE INDEX "custom_models_institution_name_key" ON "custom_models" USING btree ("institution_id",lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "custom_models_global_name_key" ON "custom_models" USING btree (lower("name")) WHERE "custom_models"."institution_id" is null;--> statement-breakpoint
CREATE INDEX "custom_models_institution_status_idx" ON "custom_models" USING btree ("institution_id","status");