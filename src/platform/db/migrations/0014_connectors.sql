CREATE TABLE "mcp_servers" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24),
	"name" text NOT NULL,
	"url" text NOT NULL,
	"transport" text DEFAULT 'streamable-http' NOT NULL,
	"credential_sealed" text,
	"credential_header" text,
	"require_approval" boolean DEFAULT true NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"allowed_tools" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tools" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tools_error" text,
	"tools_listed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_institution_name_key" ON "mcp_servers" USING btree ("institution_id",lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_global_name_key" ON "mcp_servers" USING btree (lower("name")) WHERE "mcp_servers"."institution_id" is null;--> statement-breakpoint
CREATE INDEX "mcp_servers_institution_status_idx" ON "mcp_servers" USING btree ("institution_id","status");--> statement-breakpoint
-- Row change notices (migration 0008): every process drops its cached connector rows and closes a client
-- whose server was changed or deleted.
CREATE TRIGGER mcp_servers_row_change AFTER INSERT OR UPDATE OR DELETE ON mcp_servers FOR EACH ROW EXECUTE FUNCTION notify_row_change('id');
