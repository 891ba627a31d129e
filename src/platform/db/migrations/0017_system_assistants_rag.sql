-- The system assistants answer from the person's files (docs/decisions.md, "First steps"). New
-- deployments seed them with rag_enabled; here the rows an earlier start seeded follow, unless an
-- operator has edited them since (their updated_at moved), whose choice stands.
UPDATE "assistants" SET "rag_enabled" = true
WHERE "system_key" IN ('new-conversation', 'writing-assistant', 'tutor')
  AND "rag_enabled" = false
  AND "updated_at" = "created_at";
