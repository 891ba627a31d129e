CREATE TABLE "lti_login_states" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"state_hash" text NOT NULL,
	"nonce_hash" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lti_platforms" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"auth_login_url" text NOT NULL,
	"jwks_url" text NOT NULL,
	"deployment_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" char(24),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "lti_platforms" ADD CONSTRAINT "lti_platforms_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "lti_login_states_state_key" ON "lti_login_states" USING btree ("state_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "lti_login_states_nonce_key" ON "lti_login_states" USING btree ("nonce_hash");--> statement-breakpoint
CREATE INDEX "lti_login_states_expires_idx" ON "lti_login_states" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "lti_platforms_institution_issuer_client_key" ON "lti_platforms" USING btree ("institution_id","issuer","client_id");--> statement-breakpoint
CREATE INDEX "lti_platforms_issuer_client_idx" ON "lti_platforms" USING btree ("issuer","client_id");