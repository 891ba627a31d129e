// Opening and ending voice sessions. Opening checks the twin (rtEnabled, rtAdminOnly) and opens the first
// exchange's record as a turn opens its own (caps, then a hold for the first minutes of talk), then
// answers a one-use token valid 60 seconds, stored as a hash so any process's relay can use it. Ending
// works from any process: the row ends, and the process holding the call hears it on the bus.
import { eq } from 'drizzle-orm';
import { hashToken, randomToken } from '../../platform/crypto/hash.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import { resolveAssistant } from '../assistants/resolver.js';
import { payerFor } from '../credits/payer.js';
import type { TurnDeps } from '../conversations/turn-deps.js';
import { assertTwinUsable } from '../twins/twins.service.js';
import { users } from '../users/users.tables.js';
import { dropUnusedRecord, openExchangeRecord } from './rt-exchanges.js';
import type { RtPrices } from './rt-prices.js';
import { endSession, findSession, insertSession } from './rt-sessions.repo.js';

export const RT_END_CHANNEL = 'rt.end';

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    /** A voice session ended by its route: the process holding its call closes it. */
    'rt.end': { sessionId: string };
  }
}

export const RELAY_PATH = '/api/ai/rt/ws';
export const TOKEN_TTL_MS = 60_000;
/** The voice when neither the request, the person (rt_voice) nor the twin (rtVoice) names one. */
export const DEFAULT_VOICE = 'alloy';
const PREVIEW_CHARS = 200;

export const RT_MESSAGES = {
  notConfigured: 'Real-time voice is not configured on this service',
  disabled: 'Real-time voice is switched off for this Digital Twin',
  adminOnly: 'Real-time voice is open to the administrators of this Digital Twin only',
  noTwin: 'Choose a Digital Twin before starting a voice session',
  twinNotFound: 'Institution not found',
  notFound: 'Voice session not found',
} as const;

export interface RtSessionDeps {
  turn: Pick<TurnDeps, 'db' | 'reads'>;
  bus: EventBus;
  realtime: { baseUrl: string; apiKey?: string; model?: string } | undefined;
  prices: RtPrices;
  processId: string | undefined;
}

export interface OpenedSession {
  sessionId: string;
  mode: 'realtime';
  url: string;
  token: string;
  expiresAt: string;
  voice: string;
  instructionsPreview?: string;
}

export function createRtSessionService(deps: RtSessionDeps) {
  const { db } = deps.turn;

  async function open(actor: Actor, body: { assistantId?: string; voice?: string }): Promise<OpenedSession> {
    const realtime = deps.realtime;
    if (!realtime) throw new AppError(503, RT_MESSAGES.notConfigured, 'RT_NOT_CONFIGURED');
    if (!actor.twinId) throw new BadRequestError(RT_MESSAGES.noTwin, 'NO_CURRENT_TWIN');
    const twin = await deps.turn.reads.twin(actor.twinId);
    if (!twin) throw new NotFoundError(RT_MESSAGES.twinNotFound);
    assertTwinUsable(twin);
    if (!twin.rtEnabled) throw new ForbiddenError(RT_MESSAGES.disabled, 'RT_DISABLED');
    const administers = actor.accountType === 'super' || actor.role === 'admin';
    if (twin.rtAdminOnly && !administers) throw new ForbiddenError(RT_MESSAGES.adminOnly, 'RT_ADMIN_ONLY');
    const [assistant, [person]] = await Promise.all([
      resolveAssistant(db, actor, body.assistantId, deps.turn.reads.standardAssistant),
      db.select({ rtVoice: users.rtVoice }).from(users).where(eq(users.id, actor.userId)),
    ]);
    const model = assistant.stsConversationModel || realtime.model;
    if (!model) throw new AppError(503, RT_MESSAGES.notConfigured, 'RT_NOT_CONFIGURED');
    const voice = body.voice || person?.rtVoice || twin.rtVoice || DEFAULT_VOICE;
    // The first exchange's record: the caps and the hold, as any turn (429, 402 otherwise).
    const scene = {
      twin,
      userId: actor.userId,
      payer: payerFor(twin, { kind: 'person', userId: actor.userId }),
      assistant: { id: assistant.assistant.id, name: assistant.assistant.name },
      model,
      prices: deps.prices,
      processId: deps.processId,
    };
    const record = await openExchangeRecord(db, scene, null);
    const token = randomToken(32);
    const expiresAt = new Date(Date.now() + TOKEN_TTL_MS);
    const session = await insertSession(db, {
      twinId: twin.id,
      userId: actor.userId,
      authSessionId: actor.sessionId,
      caller: actor,
      assistantId: assistant.assistant.id,
      voice,
      model,
      tokenHash: hashToken(token),
      tokenExpiresAt: expiresAt,
      conversationId: record.conversationId,
      recordId: record.id,
      processId: deps.processId ?? null,
    }).catch(async (error: unknown) => {
      await dropUnusedRecord(db, record.id);
      throw error;
    });
    // A token never used: the session ends and its record's hold is given back.
    setTimeout(() => void expire(session.id).catch(() => {}), TOKEN_TTL_MS + 1_000).unref();
    const preview = assistant.instructions.slice(0, PREVIEW_CHARS);
    return {
      sessionId: session.id,
      mode: 'realtime',
      url: `${RELAY_PATH}?session=${session.id}`,
      token,
      expiresAt: expiresAt.toISOString(),
      voice,
      ...(preview ? { instructionsPreview: preview } : {}),
    };
  }

  async function expire(sessionId: string): Promise<void> {
    const ended = await endSession(db, sessionId, 'TOKEN_EXPIRED', ['open']);
    if (ended?.recordId) await dropUnusedRecord(db, ended.recordId);
  }

  /** Ends the person's own session from any process; 404 for another person's or an unknown one. */
  async function end(actor: Actor, sessionId: string): Promise<void> {
    const session = await findSession(db, sessionId);
    if (!session || session.userId !== actor.userId || session.twinId !== actor.twinId) throw new NotFoundError(RT_MESSAGES.notFound);
    // Never connected: ended here, its record's hold given back.
    const unconnected = await endSession(db, sessionId, 'ENDED', ['open']);
    if (unconnected) {
      if (unconnected.recordId) await dropUnusedRecord(db, unconnected.recordId);
      return;
    }
    if (session.status === 'ended') return;
    await endSession(db, sessionId, 'ENDED', ['live']);
    await deps.bus.publish(RT_END_CHANNEL, { sessionId });
  }

  return { open, end };
}

export type RtSessionService = ReturnType<typeof createRtSessionService>;
