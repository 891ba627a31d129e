ALTER TABLE "history_feedback" ADD COLUMN "status" text DEFAULT 'new' NOT NULL;--> statement-breakpoint
ALTER TABLE "history_feedback" ADD COLUMN "admin_note" text DEFAULT '' NOT NULL;