-- An identity belongs to the provider record it was made through (a deployment provider's id from
-- the configuration, or a twin SSO provider's id): the same issuer + subject arriving through another
-- record (another twin's) is another identity, so the key becomes (provider, issuer, subject).
--
-- Existing rows are left with provider null, "made before records were told apart": this database
-- cannot tell which record made them, because deployment providers live in the configuration, not
-- here, and one issuer may sit behind a deployment provider and several twins' providers at once.
-- A guess could hand a person to a twin they never signed in through, or lock them out of the
-- record they use. Instead the sign-in adopts such a row (oauth.service.ts, adoptLegacyIdentity):
-- through a deployment provider, or through a twin's provider of a twin the person already belongs
-- to, it writes a row bound to that record; through any other twin's provider it is not found.
DROP INDEX "oidc_identities_issuer_subject_key";--> statement-breakpoint
ALTER TABLE "oidc_identities" ADD COLUMN "provider" text;--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_identities_provider_issuer_subject_key" ON "oidc_identities" USING btree ("provider","issuer","subject");
