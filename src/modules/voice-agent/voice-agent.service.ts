// Voice-agent mode: an external voice agent, identified by a twin's `voice_agent_id`, asks the service
// to run a tool for a person on a live call. The call runs exactly as a chat turn's would (the same
// tools, the twin's toolsDisabled, the approval card in every tab of the person) and the request is
// held while the card waits, 45 seconds at most. `ended` cancels what waits for that call, on every
// process (through the event bus), and marks the call ended: a tool request naming it later is refused
// (409 CALL_ENDED) and nothing runs.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, NotFoundError } from '../../platform/http/errors.js';
import { permissionsFor } from '../../platform/http/permissions.js';
import { newId } from '../../platform/ids/ids.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import { resolveStandardAssistant, standardAssistant } from '../assistants/resolver.js';
import { toolsForTurn, type TurnToolDeps } from '../conversations/turn-tools.js';
import { callHasEnded, findTwinMember, findVoiceAgentTwin, markCallEnded, type VoiceAgentPerson } from './voice-agent.repo.js';

/** The longest a voice call's tool request is held for a decision (a caller on the line waits no longer). */
export const VOICE_AGENT_WAIT_MS = 45_000;
export const VOICE_AGENT_ENDED_CHANNEL = 'voice-agent.ended';

const endedEvent = z.object({ twinId: z.string(), callId: z.string() });
type EndedEvent = z.infer<typeof endedEvent>;

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    /** A voice agent's call ended: the tool requests of that call still waiting are cancelled. */
    'voice-agent.ended': EndedEvent;
  }
}

export const VOICE_AGENT_MESSAGES = {
  notConfigured: 'The voice agent is not configured on this deployment (VOICE_AGENT_SECRET)',
  badSignature: 'The X-Twin-Signature header is missing, wrong, older than 5 minutes or already used',
  unknownAgent: 'No twin uses this voice agent',
  notMember: 'This person is not a member of the twin',
  unknownTool: 'The twin offers no such tool',
  toolFailed: 'The tool could not be reached',
  callEnded: 'This call has ended; the tool did not run',
} as const;

export type ToolDecisionCode = 'DECLINED' | 'EXPIRED' | 'CANCELLED';
export type ToolOutcome = { success: true; result: string } | { success: false; code: ToolDecisionCode; message: string };

export interface ToolRequest {
  voiceAgentId: string;
  callId: string;
  userId: string;
  tool: string;
  arguments: unknown;
}

const DECISION_MESSAGES: Record<ToolDecisionCode, string> = {
  DECLINED: 'The person declined the call; the tool did not run',
  EXPIRED: 'The person did not decide in time; the tool did not run',
  CANCELLED: 'The call ended before a decision; the tool did not run',
};

export interface VoiceAgentDeps {
  db: Database;
  bus: EventBus;
  tools: TurnToolDeps;
  /** The deployment's approval wait (APPROVAL_TIMEOUT_MS); a voice call waits the shorter of it and 45 s. */
  approvalTimeoutMs: number;
}

/** The call's conversation id: the same for every request of one call, so approve_conversation covers the rest of the call. */
export function callConversationId(twinId: string, callId: string): string {
  return createHash('sha256').update(`voice-agent:${twinId}:${callId}`).digest('hex').slice(0, 24);
}

function actorFor(twinId: string, person: VoiceAgentPerson): Actor {
  return {
    userId: person.userId,
    sessionId: '',
    email: person.email,
    accountType: person.accountType,
    twinId,
    role: person.role,
    permissions: permissionsFor(person.accountType, person.role, person.grants),
    launchScope: null,
    mustChangePassword: false,
  };
}

export async function createVoiceAgentService(deps: VoiceAgentDeps) {
  const { db } = deps;
  const waitMs = Math.min(deps.approvalTimeoutMs, VOICE_AGENT_WAIT_MS);
  /** Tool requests of this process still running, by call. */
  const running = new Map<string, Set<AbortController>>();
  const callKey = (twinId: string, callId: string) => `${twinId}\n${callId}`;
  const cancelCall = (event: EndedEvent) => {
    for (const controller of running.get(callKey(event.twinId, event.callId)) ?? []) controller.abort();
  };
  const off = await deps.bus.subscribe(VOICE_AGENT_ENDED_CHANNEL, cancelCall, { schema: endedEvent });

  async function twinOf(voiceAgentId: string) {
    const twin = await findVoiceAgentTwin(db, voiceAgentId);
    if (!twin) throw new NotFoundError(VOICE_AGENT_MESSAGES.unknownAgent, 'VOICE_AGENT_NOT_FOUND');
    return twin;
  }

  async function runTool(request: ToolRequest, signal: AbortSignal): Promise<ToolOutcome> {
    const twin = await twinOf(request.voiceAgentId);
    const person = await findTwinMember(db, twin.id, request.userId);
    if (!person) throw new NotFoundError(VOICE_AGENT_MESSAGES.notMember, 'USER_NOT_FOUND');
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const key = callKey(twin.id, request.callId);
    const calls = running.get(key) ?? new Set<AbortController>();
    running.set(key, calls.add(controller));
    try {
      // Checked once this request is among the call's running ones: an end from now on cancels it.
      if (await callHasEnded(db, twin.id, request.callId)) throw new AppError(409, VOICE_AGENT_MESSAGES.callEnded, 'CALL_ENDED');
      const tools = await toolsForTurn(deps.tools, {
        actor: actorFor(twin.id, person),
        twin,
        assistant: await resolveStandardAssistant(() => standardAssistant(db)),
        historyId: newId(),
        conversationId: callConversationId(twin.id, request.callId),
        modelKind: 'endpoint',
        origin: 'voice',
        approvalTimeoutMs: waitMs,
        signal: controller.signal,
      });
      const spec = tools.specs.find((candidate) => candidate.key === request.tool);
      if (!spec) throw new NotFoundError(VOICE_AGENT_MESSAGES.unknownTool, 'TOOL_NOT_FOUND');
      let outcome: { text: string };
      try {
        outcome = await spec.run(request.arguments ?? {}, { signal: controller.signal, callId: newId(), status: () => {} });
      } catch {
        // Cut short by the call's end: it ended as cancelled, whatever the server managed.
        if (controller.signal.aborted) return { success: false, code: 'CANCELLED', message: DECISION_MESSAGES.CANCELLED };
        throw new AppError(502, VOICE_AGENT_MESSAGES.toolFailed, 'TOOL_FAILED');
      }
      const decision = tools.calls.at(-1)?.approval?.decision;
      const code: ToolDecisionCode | undefined =
        decision === 'deny' ? 'DECLINED' : decision === 'expired' ? 'EXPIRED' : decision === 'cancelled' ? 'CANCELLED' : undefined;
      if (code) return { success: false, code, message: DECISION_MESSAGES[code] };
      return { success: true, result: outcome.text };
    } finally {
      signal.removeEventListener('abort', onAbort);
      calls.delete(controller);
      if (calls.size === 0) running.delete(key);
    }
  }

  async function ended(request: { voiceAgentId: string; callId: string }): Promise<void> {
    const twin = await twinOf(request.voiceAgentId);
    const event = { twinId: twin.id, callId: request.callId };
    // Marked first: a request that checks after this is refused, one that checked before is cancelled.
    await markCallEnded(db, twin.id, request.callId);
    cancelCall(event);
    await deps.bus.publish(VOICE_AGENT_ENDED_CHANNEL, event);
  }

  return {
    runTool,
    ended,
    async close() {
      for (const calls of running.values()) for (const controller of calls) controller.abort();
      await off().catch(() => {});
    },
  };
}

export type VoiceAgentService = Awaited<ReturnType<typeof createVoiceAgentService>>;
