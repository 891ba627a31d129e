// Long-term memory: after a turn, the `memory.extract` job asks the model for durable facts about the
// person from the exchange and keeps them as personal rows in the `long-term` namespace, merging by
// key instead of piling up. It runs in the background, never in the answer's path.
import { z } from 'zod';
import { createModelRegistry, type DeploymentModelConfig, type ModelRegistry } from '../../ai/registry.js';
import { loadAiSdk } from '../../ai/sdk.js';
import type { Database } from '../../platform/db/client.js';
import { objectId } from '../../platform/http/schemas.js';
import type { JobLogger, JobQueue } from '../../platform/jobs/queue.js';
import { findTwinById } from '../twins/twins.repo.js';
import { findUserById } from '../users/users.repo.js';
import { insertMemory, listPersonalInNamespace, updateMemory } from './memory.repo.js';
import { LONG_TERM_NAMESPACE } from './memory.tables.js';

export const EXTRACT_JOB = 'memory.extract';
/** Facts kept from one exchange at most; more is noise. */
const MAX_FACTS = 10;
const MAX_EXCHANGE_CHARS = 6_000;
const FACT_DESCRIPTION = 'Learned from a conversation';

export const extractionPayload = z.object({
  userId: objectId,
  institutionId: objectId,
  historyId: objectId.optional(),
  question: z.string(),
  answer: z.string(),
});
export type ExtractionPayload = z.infer<typeof extractionPayload>;

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'memory.extract': ExtractionPayload;
  }
}

/** The only shape accepted from the model; anything else proposes nothing. */
const factsReply = z.object({ facts: z.array(z.unknown()) }).loose();
const factItem = z.object({ key: z.string(), value: z.string() }).loose();

export type ExtractionOutcome = 'disabled' | 'local-model' | 'no-facts' | 'stored';

export interface ExtractionDeps {
  db: Database;
  registry: ModelRegistry;
  logger?: JobLogger;
}

const SYSTEM = [
  'You extract durable facts about the person (the user) from one exchange with an assistant.',
  'Durable facts stay true for months: name, role, employer, location, language, preferences, long-running goals.',
  'Ignore passing requests, questions about the world, and anything the assistant said about itself.',
  'Reuse the key of a known fact when the exchange updates it.',
  'Reply with JSON only, exactly in this shape: {"facts":[{"key":"short name","value":"the fact"}]}. Reply {"facts":[]} when there is none.',
].join('\n');

export function defineMemoryJobs(jobs: JobQueue, db: Database, model: DeploymentModelConfig, logger?: JobLogger): void {
  const deps: ExtractionDeps = { db, registry: createModelRegistry(model), logger };
  jobs.define({
    name: EXTRACT_JOB,
    schema: extractionPayload,
    // Idempotent by design: a rerun proposes facts again and the merge keeps one row per key.
    perform: async (payload, { signal }) => {
      await extractMemories(deps, payload, signal);
    },
    // One active extraction per person and twin (see enqueueExtraction), so merges never race.
    policy: 'singleton',
    retryLimit: 2,
    retryDelaySeconds: 30,
    expireInSeconds: 5 * 60,
    concurrency: 2,
  });
}

/**
 * For the conversation engine, once the answer is complete: queues the extraction and never throws
 * (a failure to queue is logged and costs the person nothing but this one extraction).
 */
export async function enqueueExtraction(jobs: Pick<JobQueue, 'send'>, payload: ExtractionPayload, logger?: JobLogger): Promise<string | null> {
  try {
    return await jobs.send(EXTRACT_JOB, payload, { singletonKey: `${payload.institutionId}:${payload.userId}` });
  } catch (err) {
    logger?.error({ err, job: EXTRACT_JOB }, 'memory extraction could not be queued');
    return null;
  }
}

let warnedLocal = false;

export async function extractMemories(deps: ExtractionDeps, payload: ExtractionPayload, signal?: AbortSignal): Promise<ExtractionOutcome> {
  const { db } = deps;
  // Checked when the job runs: a switch turned off after the turn still stops the save.
  const [twin, user] = await Promise.all([findTwinById(db, payload.institutionId), findUserById(db, payload.userId)]);
  if (!twin?.longTermMemoryEnabled || !user?.userMemoryEnabled) return 'disabled';
  const resolved = deps.registry.resolveModel({ kind: 'default' });
  if (resolved.kind === 'local') {
    if (!warnedLocal) deps.logger?.info({ job: EXTRACT_JOB }, 'long-term memory needs a model endpoint: the built-in local model cannot extract facts, extraction skipped');
    warnedLocal = true;
    return 'local-model';
  }
  const known = await listPersonalInNamespace(db, payload.institutionId, payload.userId, LONG_TERM_NAMESPACE);
  const { generateText } = await loadAiSdk();
  const { text } = await generateText({
    model: resolved.model,
    system: SYSTEM,
    prompt: buildPrompt(payload, known.map((row) => `${row.keyName}: ${row.keyValue}`)),
    maxRetries: 1,
    abortSignal: signal,
  });
  const facts = parseFacts(text);
  if (facts.length === 0) return 'no-facts';
  await mergeFacts(db, payload, facts);
  return 'stored';
}

function buildPrompt(payload: ExtractionPayload, known: string[]): string {
  const clip = (text: string) => (text.length > MAX_EXCHANGE_CHARS ? `${text.slice(0, MAX_EXCHANGE_CHARS)}…` : text);
  return [
    'Known facts:',
    known.length ? known.map((line) => `- ${line}`).join('\n') : '(none)',
    '',
    `User: ${clip(payload.question)}`,
    `Assistant: ${clip(payload.answer)}`,
  ].join('\n');
}

export interface Fact {
  key: string;
  value: string;
}

/** Reads the facts from the model's text defensively: code fences, prose around the JSON, bad items. */
export function parseFacts(text: string): Fact[] {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1));
  } catch {
    return [];
  }
  const result = factsReply.safeParse(parsed);
  if (!result.success) return [];
  const seen = new Set<string>();
  const facts: Fact[] = [];
  for (const item of result.data.facts) {
    // A malformed item is dropped; the well-formed ones still count.
    const fact = factItem.safeParse(item).data;
    if (!fact) continue;
    const key = fact.key.trim().slice(0, 200);
    const value = fact.value.trim().slice(0, 4000);
    if (!key || !value || seen.has(normaliseKey(key))) continue;
    seen.add(normaliseKey(key));
    facts.push({ key, value });
    if (facts.length >= MAX_FACTS) break;
  }
  return facts;
}

/** "Favourite  Colour", "favourite_colour" and "favourite-colour" are one key. */
export function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

const sameValue = (a: string, b: string): boolean => a.trim().replace(/\s+/g, ' ').toLowerCase() === b.trim().replace(/\s+/g, ' ').toLowerCase();

async function mergeFacts(db: Database, payload: ExtractionPayload, facts: Fact[]): Promise<void> {
  const existing = await listPersonalInNamespace(db, payload.institutionId, payload.userId, LONG_TERM_NAMESPACE);
  const byKey = new Map(existing.map((row) => [normaliseKey(row.keyName), row]));
  for (const fact of facts) {
    const row = byKey.get(normaliseKey(fact.key));
    if (row) {
      if (!sameValue(row.keyValue, fact.value)) await updateMemory(db, row.twinId, row.id, { keyValue: fact.value });
      continue;
    }
    await insertMemory(db, {
      twinId: payload.institutionId,
      userId: payload.userId,
      keyName: fact.key,
      keyValue: fact.value,
      keyDescription: FACT_DESCRIPTION,
      keyNamespace: LONG_TERM_NAMESPACE,
      shared: false,
    });
  }
}
