-- pg_trgm is a trusted extension (PostgreSQL 13+): a database owner may create it; PGlite loads it from its contrib.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "users_email_trgm_idx" ON "users" USING gin ("email" gin_trgm_ops) WITH (fastupdate=false) WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "users_fname_trgm_idx" ON "users" USING gin ("fname" gin_trgm_ops) WITH (fastupdate=false) WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "users_lname_trgm_idx" ON "users" USING gin ("lname" gin_trgm_ops) WITH (fastupdate=false) WHERE "users"."deleted_at" is null;