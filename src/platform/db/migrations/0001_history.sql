CREATE TABLE "conversations" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"assistant_id" char(24),
	"title" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_activity_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "history" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"conversation_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"assistant_id" char(24),
	"assistant_name" text DEFAULT '' NOT NULL,
	"question" text NOT NULL,
	"answer" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'streaming' NOT NULL,
	"error" text,
	"models" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"reasoning_tokens" integer DEFAULT 0 NOT NULL,
	"credits" numeric(18, 6) DEFAULT 0 NOT NULL,
	"tool_calls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"subagents" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"rag_search" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"reasoning" text,
	"memories" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tool_call_count" integer DEFAULT 0 NOT NULL,
	"subagent_count" integer DEFAULT 0 NOT NULL,
	"rag_search_count" integer DEFAULT 0 NOT NULL,
	"memory_count" integer DEFAULT 0 NOT NULL,
	"rag_search_mode" text,
	"details_expired_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "history_feedback" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"history_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"rating" text NOT NULL,
	"comment" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "history" ADD CONSTRAINT "history_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "history" ADD CONSTRAINT "history_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "history_feedback" ADD CONSTRAINT "history_feedback_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "history_feedback" ADD CONSTRAINT "history_feedback_history_id_history_id_fk" FOREIGN KEY ("history_id") REFERENCES "public"."history"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversations_institution_user_activity_idx" ON "conversations" USING btree ("institution_id","user_id","last_activity_at");--> statement-breakpoint
CREATE INDEX "conversations_institution_activity_idx" ON "conversations" USING btree ("institution_id","last_activity_at");--> statement-breakpoint
CREATE INDEX "history_institution_user_created_idx" ON "history" USING btree ("institution_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "history_institution_conversation_created_idx" ON "history" USING btree ("institution_id","conversation_id","created_at");--> statement-breakpoint
CREATE INDEX "history_institution_created_idx" ON "history" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE INDEX "history_unexpired_idx" ON "history" USING btree ("institution_id","conversation_id") WHERE "history"."details_expired_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "history_feedback_institution_history_key" ON "history_feedback" USING btree ("institution_id","history_id");--> statement-breakpoint
CREATE INDEX "history_feedback_institution_created_idx" ON "history_feedback" USING btree ("institution_id","created_at");