CREATE TABLE "subscription_connections" (
	"institution_id" char(24) PRIMARY KEY NOT NULL,
	"pending_device_code_sealed" text,
	"pending_expires_at" timestamp with time zone,
	"pending_interval_seconds" integer,
	"pending_next_poll_at" timestamp with time zone,
	"pending_started_by" char(24),
	"access_token_sealed" text,
	"refresh_token_sealed" text,
	"token_expires_at" timestamp with time zone,
	"account_sealed" text,
	"connected_at" timestamp with time zone,
	"connected_by" char(24),
	"refresh_failed_at" timestamp with time zone,
	"token_version" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscription_connections" ADD CONSTRAINT "subscription_connections_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Row change notices (0008) keyed by the twin: cached profiles show whether the twin is connected.
CREATE TRIGGER subscription_connections_row_change AFTER INSERT OR UPDATE OR DELETE ON subscription_connections FOR EACH ROW EXECUTE FUNCTION notify_row_change('institution_id');
