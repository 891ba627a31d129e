-- Row change notices: after a change to a row that a process may cache, the database itself tells every
-- listening process, once the transaction commits (NOTIFY is transactional and delivered in commit order).
-- Payload "<table>:<key>"; the key column is the trigger's argument.
CREATE OR REPLACE FUNCTION notify_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('row_changes', TG_TABLE_NAME || ':' || (to_jsonb(COALESCE(NEW, OLD)) ->> TG_ARGV[0]));
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER users_row_change AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
--> statement-breakpoint
CREATE TRIGGER institutions_row_change AFTER INSERT OR UPDATE OR DELETE ON institutions FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
--> statement-breakpoint
CREATE TRIGGER memberships_row_change AFTER INSERT OR UPDATE OR DELETE ON memberships FOR EACH ROW EXECUTE FUNCTION notify_row_change('user_id');
--> statement-breakpoint
CREATE TRIGGER assistants_row_change AFTER INSERT OR UPDATE OR DELETE ON assistants FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
