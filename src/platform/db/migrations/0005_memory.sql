CREATE TABLE "memory_parameters" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"key_name" text NOT NULL,
	"key_value" text NOT NULL,
	"key_description" text DEFAULT '' NOT NULL,
	"key_namespace" text DEFAULT 'default' NOT NULL,
	"shared" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memory_parameters" ADD CONSTRAINT "memory_parameters_institution_id_institutions_id_fk" FOREIGN KEY ("institution_id") REFERENCES "public"."institutions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_parameters_institution_user_idx" ON "memory_parameters" USING btree ("institution_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "memory_parameters_institution_shared_idx" ON "memory_parameters" USING btree ("institution_id","created_at") WHERE "memory_parameters"."shared";