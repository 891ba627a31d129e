// Wires real-time voice: the session routes and the relay on the HTTP server's upgrade, on the turn's
// own deps (admission, context, tools and approvals, settle), and the sweep of sessions whose process died.
import type { Config } from '../../config.js';
import type { App } from '../../platform/http/schemas.js';
import type { ProcessLiveness } from '../../platform/processes/liveness.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { TurnDeps } from '../conversations/turn-deps.js';
import { attachRelay } from './rt-relay.js';
import { endSessionsOfGoneProcesses } from './rt-sessions.repo.js';
import { createRtSessionService, RT_END_CHANNEL } from './rt-session.service.js';
import { rtRoutes } from './rt.routes.js';

const MINUTE_MS = 60_000;

export interface RtModuleDeps {
  turn: TurnDeps;
  bus: EventBus;
  voice: Config['voice'];
  /**
   * The length of a session's minute in ms (60 s unless set): each one holds another minute of talk, and
   * RT_MAX_MINUTES of them end the session. Tests set it small; operators only ever set RT_MAX_MINUTES.
   */
  minuteMs?: number;
  liveness: ProcessLiveness | undefined;
}

/** What other modules may ask of voice. */
export interface RealtimeVoice {
  /** Ends these live calls on whichever process holds them (the end route's message on the bus). */
  endCalls(sessionIds: string[]): Promise<void>;
}

export async function registerRealtimeVoice(app: App, deps: RtModuleDeps): Promise<RealtimeVoice> {
  const { realtime, prices, maxMinutes, approvalTimeoutMs } = deps.voice;
  const processId = deps.liveness?.id;
  const service = createRtSessionService({ turn: deps.turn, bus: deps.bus, realtime, prices, processId });
  rtRoutes(app, service);
  if (realtime) {
    const minuteMs = deps.minuteMs ?? MINUTE_MS;
    const relay = await attachRelay(app.server, deps.bus, { turn: deps.turn, realtime, prices, minuteMs, maxSessionMs: maxMinutes * minuteMs, approvalTimeoutMs, processId, log: app.log });
    app.addHook('preClose', () => relay.close());
  }
  const liveness = deps.liveness;
  if (liveness) {
    const sweep = () => endSessionsOfGoneProcesses(deps.turn.db, liveness.id, liveness.timeoutSeconds).then(() => {});
    sweep().catch((err: unknown) => app.log.error({ err }, 'sweep of voice sessions failed'));
    const off = liveness.onBeat(sweep);
    app.addHook('onClose', async () => off());
  }
  return {
    async endCalls(sessionIds) {
      for (const sessionId of sessionIds) await deps.bus.publish(RT_END_CHANNEL, { sessionId });
    },
  };
}
