-- The balances' row change notices, without turning both versions of the row into JSON. A turn's opening
-- (its hold) and its settle (the charge) each update the paying row (users, or institutions for a pooling
-- twin), and notify_row_change compared the whole row as JSON twice for each (0010): the most expensive
-- part of a turn's statements besides its records. Now a WHEN condition, run without PL/pgSQL, skips a
-- change of nothing but the holds (the new row's bytes equal to the old row with the new holds); any other
-- change names the row by its id. A change the old rule skipped is never notified, and one it notified
-- always is (bytes unequal whenever the JSON differed); a change equal in value but not in bytes (1.0 made
-- 1.00) now sends a notice, which costs a cache entry, nothing more.
CREATE OR REPLACE FUNCTION notify_row_change_by_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('row_changes', TG_TABLE_NAME || ':' || NEW.id);
  RETURN NULL;
END
$$;
--> statement-breakpoint
DROP TRIGGER users_row_change ON users;
--> statement-breakpoint
CREATE TRIGGER users_row_change AFTER INSERT OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
--> statement-breakpoint
CREATE TRIGGER users_row_update AFTER UPDATE ON users FOR EACH ROW
  WHEN (NEW *<> jsonb_populate_record(OLD, jsonb_build_object('credits_held', NEW.credits_held)))
  EXECUTE FUNCTION notify_row_change_by_id();
--> statement-breakpoint
DROP TRIGGER institutions_row_change ON institutions;
--> statement-breakpoint
CREATE TRIGGER institutions_row_change AFTER INSERT OR DELETE ON institutions FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
--> statement-breakpoint
CREATE TRIGGER institutions_row_update AFTER UPDATE ON institutions FOR EACH ROW
  WHEN (NEW *<> jsonb_populate_record(OLD, jsonb_build_object('credits_held', NEW.credits_held)))
  EXECUTE FUNCTION notify_row_change_by_id();
