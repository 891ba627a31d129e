ALTER TABLE "history" ADD COLUMN "held_credits" numeric(18, 6) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "history" ADD COLUMN "held_account" text;--> statement-breakpoint
ALTER TABLE "institutions" ADD COLUMN "credits_held" numeric(18, 6) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "credits_held" numeric(18, 6) DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "history_streaming_idx" ON "history" USING btree ("institution_id","created_at") WHERE "history"."status" = 'streaming';--> statement-breakpoint
ALTER TABLE "institutions" ADD CONSTRAINT "institutions_credits_held_nonnegative" CHECK ("institutions"."credits_held" >= 0);--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_credits_held_nonnegative" CHECK ("users"."credits_held" >= 0);--> statement-breakpoint
-- A change of nothing but a balance's holds (a turn opening or settling) is no change to what a process
-- caches: no notice for it, so holds do not empty the caches of a person or a pooling twin.
CREATE OR REPLACE FUNCTION notify_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - 'credits_held') = (to_jsonb(NEW) - 'credits_held') THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('row_changes', TG_TABLE_NAME || ':' || (to_jsonb(COALESCE(NEW, OLD)) ->> TG_ARGV[0]));
  RETURN NULL;
END
$$;
