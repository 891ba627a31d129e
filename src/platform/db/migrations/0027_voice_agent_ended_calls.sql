CREATE TABLE "voice_agent_ended_calls" (
	"institution_id" char(24) NOT NULL,
	"call_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "voice_agent_ended_calls_institution_id_call_id_pk" PRIMARY KEY("institution_id","call_id")
);
--> statement-breakpoint
CREATE INDEX "voice_agent_ended_calls_expires_idx" ON "voice_agent_ended_calls" USING btree ("expires_at");