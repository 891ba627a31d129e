CREATE TABLE "voice_agent_signatures" (
	"signature" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "voice_agent_signatures_expires_idx" ON "voice_agent_signatures" USING btree ("expires_at");