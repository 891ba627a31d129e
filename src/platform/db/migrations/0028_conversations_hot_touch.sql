DROP INDEX "conversations_institution_user_activity_idx";--> statement-breakpoint
DROP INDEX "conversations_institution_activity_idx";--> statement-breakpoint
CREATE INDEX "conversations_institution_user_idx" ON "conversations" USING btree ("institution_id","user_id");--> statement-breakpoint
-- A turn's settle (and a continued conversation's opening) moves last_activity_at: with no index on it and
-- room on the row's page, that is a HOT update (no index entry written). New pages keep half free for it.
ALTER TABLE "conversations" SET (fillfactor = 50);
