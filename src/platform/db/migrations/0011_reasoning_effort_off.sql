-- One list of reasoning efforts (src/ai/registry.ts, REASONING_EFFORTS): 'off' turns reasoning off
-- everywhere. Assistants' voice effort and custom models' minimum said 'none' for it until now.
UPDATE "assistants" SET "sts_reasoning_effort" = 'off' WHERE "sts_reasoning_effort" = 'none';--> statement-breakpoint
UPDATE "custom_models" SET "min_reasoning_effort" = 'off' WHERE "min_reasoning_effort" = 'none';
