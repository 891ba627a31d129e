// The Realtime event protocol as the relay reads it (GA event names): the event's type read from the
// frame's first bytes, so audio frames are passed on without being parsed; which client events would
// replace what the service sets; the provider's URL.
import type { RawData } from 'ws';
import type { TurnDeps } from '../conversations/turn-deps.js';
import type { RtPrices } from './rt-prices.js';

export interface RelayDeps {
  /** The turn's pieces a call uses; the model choice's (secrets, models, …) for the subagents it delegates to. */
  turn: Pick<TurnDeps, 'db' | 'reads' | 'providers' | 'tools' | 'changes' | 'secrets' | 'models' | 'deploymentModel' | 'outbound' | 'deploymentPrice' | 'subscriptionModel'>;
  realtime: { baseUrl: string; apiKey?: string };
  prices: RtPrices;
  /** A minute of the session, in ms: each holds another minute of talk (60 s; tests set it small). */
  minuteMs: number;
  /** The session's longest life, in ms (RT_MAX_MINUTES minutes): then it ends with 4001 RT_MAX_MINUTES. */
  maxSessionMs: number;
  /** How long a tool call waits for the person's approval (RT_APPROVAL_TIMEOUT_MS, 45 s). */
  approvalTimeoutMs: number;
  processId: string | undefined;
  log: { warn(details: object, message: string): void };
}

/** Provider events the service reads; every other one (audio above all) is only passed on. */
export const WATCHED_PROVIDER_EVENTS: ReadonlySet<string> = new Set([
  'conversation.item.input_audio_transcription.completed',
  'response.output_audio_transcript.delta',
  'response.output_text.delta',
  'response.output_item.done',
  'response.done',
]);

/** How providers and clients start an event: `{"type":"`. */
const COMPACT_START = Buffer.from('{"type":"');
const TYPE_KEY = Buffer.from('"type"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LONGEST_TYPE = 80;

/**
 * The event's type. Read from the bytes in place (no copy, no parse: it runs for every frame both ways,
 * and parsing a 20 ms audio frame only to learn it is audio is what it avoids) when the frame starts
 * `{"type":"` and holds no escape and no second `"type"` key; any other frame is parsed, so an escaped
 * or repeated key (`{"type":"input_audio_buffer.append","typ\u0065":"session.update"}`) is read as the
 * provider will read it.
 */
export function peekType(data: RawData): string | undefined {
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  const start = COMPACT_START.length;
  if (buffer.length > start && buffer.compare(COMPACT_START, 0, start, 0, start) === 0) {
    const end = buffer.indexOf(QUOTE, start);
    if (end > start && end - start <= LONGEST_TYPE && buffer.indexOf(BACKSLASH) < 0 && buffer.indexOf(TYPE_KEY, end) < 0) return buffer.toString('latin1', start, end);
  }
  try {
    const parsed = JSON.parse(buffer.toString('utf8')) as { type?: unknown };
    return typeof parsed.type === 'string' ? parsed.type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a client event would change of the service's session: a `session.update` naming instructions,
 * tools, tool_choice, the voice or the model; an item that is a system message or a function's output
 * (the service answers the provider's calls itself).
 */
export function lockedFieldsOf(event: Record<string, unknown> | undefined): string[] {
  if (!event) return [];
  if (event.type === 'session.update') {
    const session = (event.session ?? {}) as Record<string, unknown>;
    const locked = ['instructions', 'tools', 'tool_choice', 'voice', 'model'].filter((field) => field in session);
    const output = ((session.audio ?? {}) as Record<string, unknown>).output as Record<string, unknown> | undefined;
    if (output && 'voice' in output) locked.push('audio.output.voice');
    return locked;
  }
  if (event.type === 'conversation.item.create') {
    const item = (event.item ?? {}) as Record<string, unknown>;
    if (item.type === 'function_call_output') return ['function_call_output'];
    if (item.role === 'system') return ['instructions'];
  }
  return [];
}

/** `<base>/realtime?model=<model>`, scheme ws/wss for http/https. */
export function providerUrl(baseUrl: string, model: string): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/realtime`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : url.protocol === 'http:' ? 'ws:' : url.protocol;
  url.searchParams.set('model', model);
  return url.toString();
}
