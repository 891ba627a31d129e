CREATE TABLE "file_chunks" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"file_id" char(24) NOT NULL,
	"generation" integer NOT NULL,
	"chunk_index" integer NOT NULL,
	"text" text NOT NULL,
	"tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
--> statement-breakpoint
CREATE TABLE "file_collections" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" char(24) PRIMARY KEY NOT NULL,
	"institution_id" char(24) NOT NULL,
	"user_id" char(24) NOT NULL,
	"collection_id" char(24),
	"originalname" text NOT NULL,
	"extension" text NOT NULL,
	"mimetype" text NOT NULL,
	"kind" text NOT NULL,
	"size" integer NOT NULL,
	"storage_key" text NOT NULL,
	"confidential" boolean DEFAULT false NOT NULL,
	"shared" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'processing' NOT NULL,
	"stage" text DEFAULT 'extract' NOT NULL,
	"progress" smallint DEFAULT 0 NOT NULL,
	"error" text,
	"chunk_count" integer DEFAULT 0 NOT NULL,
	"generation" integer DEFAULT 0 NOT NULL,
	"pending_generation" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "file_chunks" ADD CONSTRAINT "file_chunks_file_id_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_collection_id_file_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."file_collections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "file_chunks_institution_file_idx" ON "file_chunks" USING btree ("institution_id","file_id","generation","chunk_index");--> statement-breakpoint
CREATE INDEX "file_chunks_file_idx" ON "file_chunks" USING btree ("file_id","generation");--> statement-breakpoint
CREATE INDEX "file_chunks_tsv_idx" ON "file_chunks" USING gin ("tsv");--> statement-breakpoint
CREATE INDEX "file_collections_institution_user_idx" ON "file_collections" USING btree ("institution_id","user_id");--> statement-breakpoint
CREATE INDEX "files_institution_user_idx" ON "files" USING btree ("institution_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "files_institution_collection_idx" ON "files" USING btree ("institution_id","collection_id");