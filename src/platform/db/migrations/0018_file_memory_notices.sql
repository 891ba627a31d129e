-- Row change notices (0008) for the twin's files and memories, under the twin's id: a turn asks
-- every time whether the person has a file search can see and which memories it may recall, and
-- those answers are cached per process (modules/files/searchable-cache.ts, modules/memory/recall-cache.ts)
-- until a file or memory of the twin changes. A statement changing many rows of one twin sends one
-- notice (identical payloads of a transaction are delivered once).
CREATE TRIGGER files_row_change AFTER INSERT OR UPDATE OR DELETE ON files FOR EACH ROW EXECUTE FUNCTION notify_row_change('institution_id');
--> statement-breakpoint
CREATE TRIGGER memory_parameters_row_change AFTER INSERT OR UPDATE OR DELETE ON memory_parameters FOR EACH ROW EXECUTE FUNCTION notify_row_change('institution_id');
