CREATE TABLE "tool_approvals" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"history_id" char(24) NOT NULL,
	"conversation_id" char(24) NOT NULL,
	"server_id" char(24) NOT NULL,
	"server_name" text NOT NULL,
	"tool" text NOT NULL,
	"arguments" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"origin" text DEFAULT 'chat' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decision" text,
	"decided_by" char(24),
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "assistants" ADD COLUMN "tools" jsonb;--> statement-breakpoint
ALTER TABLE "assistants" ADD COLUMN "delegates" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "tool_approvals" ADD CONSTRAINT "tool_approvals_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tool_approvals_institution_user_pending_idx" ON "tool_approvals" USING btree ("institution_id","user_id","expires_at") WHERE "tool_approvals"."decision" is null;--> statement-breakpoint
CREATE INDEX "tool_approvals_institution_conversation_grant_idx" ON "tool_approvals" USING btree ("institution_id","conversation_id","server_id","tool") WHERE "tool_approvals"."decision" = 'approve_conversation';