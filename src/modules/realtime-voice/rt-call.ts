// One live voice call: the person's socket and the provider's, relayed in both directions. Audio and
// every other event pass through untouched (not decoded, not stored); the service reads only what it
// needs by the event's type: a client `session.update` or item that would replace its instructions,
// tools or voice (dropped, answered SESSION_FIELD_LOCKED), the provider's function calls (run here,
// behind the turn's approval cards), the transcripts and `response.done` usage (the exchange's record).
import WebSocket, { type RawData } from 'ws';
import { toolFailureText } from '../../ai/tools/turn-tools.js';
import { AppError } from '../../platform/http/errors.js';
import { resolveAssistant } from '../assistants/resolver.js';
import { payerFor } from '../credits/payer.js';
import type { TurnTools } from '../conversations/turn-tools.js';
import { newTally } from '../conversations/subagents.js';
import type { MemoryEntry } from '../history/history.tables.js';
import { endSession } from './rt-sessions.repo.js';
import type { RtSessionRow } from './rt-sessions.tables.js';
import { adoptRecord, dropUnusedRecord, ExchangeBook, type ExchangeScene } from './rt-exchanges.js';
import { realtimeToolsOf, voiceInstructions, voiceTools, type VoiceScene } from './rt-context.js';
import { usageOfResponse } from './rt-prices.js';
import { lockedFieldsOf, peekType, providerUrl, WATCHED_PROVIDER_EVENTS, type RelayDeps } from './rt-protocol.js';

/** Close codes the relay ends a call with (the reason names the code). */
export const CLOSE = {
  hangUp: { code: 1000, reason: 'HANG_UP' },
  ended: { code: 4000, reason: 'ENDED' },
  maxMinutes: { code: 4001, reason: 'RT_MAX_MINUTES' },
  noCredits: { code: 4002, reason: 'INSUFFICIENT_CREDITS' },
  usageLimit: { code: 4003, reason: 'USAGE_LIMIT_REACHED' },
  providerClosed: { code: 4004, reason: 'PROVIDER_CLOSED' },
  failed: { code: 4005, reason: 'SESSION_FAILED' },
  shutdown: { code: 4006, reason: 'SERVICE_STOPPING' },
} as const;
type Ending = (typeof CLOSE)[keyof typeof CLOSE];

/**
 * The provider's socket: no compression (audio in base64 gains little and each frame would wait for
 * zlib), and its text passed on unchecked (the provider is trusted, and the person's browser checks
 * what reaches it; the person's own frames are checked, since the relay reads some of them).
 */
const PROVIDER_SOCKET = { perMessageDeflate: false, skipUTF8Validation: true } as const;
const TEXT = { binary: false } as const;
const BINARY = { binary: true } as const;

/** Client events held while the provider's socket opens. */
const MAX_PENDING = 256;
/** The person's speech is transcribed so the exchange's record has its question. */
export const INPUT_TRANSCRIPTION_MODEL = 'gpt-4o-mini-transcribe';

export class VoiceCall {
  readonly id: string;
  readonly #deps: RelayDeps;
  readonly #row: RtSessionRow;
  readonly #client: WebSocket;
  readonly #abort = new AbortController();
  readonly #timers: NodeJS.Timeout[] = [];
  #provider: WebSocket | undefined;
  #pending: Array<{ data: RawData | string; binary: boolean }> = [];
  #book: ExchangeBook | undefined;
  #scene: VoiceScene | undefined;
  #tools: TurnTools = { specs: [], calls: [] };
  /** What the exchange's subagents used (its record and charge carry it). */
  #tally = newTally();
  #memories: MemoryEntry[] = [];
  #runningTools = 0;
  /** Tool calls under way: the end waits for them (cancelled by then) so the record says how each ended. */
  readonly #toolRuns = new Set<Promise<void>>();
  /** Record work (settles, openings), one at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  #ended: Promise<void> | undefined;

  constructor(deps: RelayDeps, row: RtSessionRow, client: WebSocket, onEnd: () => void) {
    this.#deps = deps;
    this.#row = row;
    this.#client = client;
    this.id = row.id;
    client.on('message', (data, binary) => this.#fromClient(data, binary));
    client.on('close', () => void this.end(CLOSE.hangUp));
    client.on('error', () => void this.end(CLOSE.hangUp));
    this.#abort.signal.addEventListener('abort', onEnd, { once: true });
    void this.#start().catch((error: unknown) => {
      deps.log.warn({ err: error, sessionId: row.id }, 'voice session failed to start');
      void this.end(endingOf(error));
    });
  }

  async #start(): Promise<void> {
    const { turn, realtime } = this.#deps;
    const row = this.#row;
    const actor = row.caller;
    const [twin, assistant, opened] = await Promise.all([
      turn.reads.twin(row.twinId),
      resolveAssistant(turn.db, actor, row.assistantId, turn.reads.standardAssistant),
      row.recordId ? adoptRecord(turn.db, row.recordId, this.#deps.processId) : undefined,
    ]);
    if (!twin || !opened) throw new Error('The voice session is no longer open');
    if (this.#abort.signal.aborted) return;
    const scene: VoiceScene = { actor, twin, assistant };
    const exchangeScene: ExchangeScene = {
      twin,
      userId: row.userId,
      payer: payerFor(twin, { kind: 'person', userId: row.userId }),
      assistant: { id: assistant.assistant.id, name: assistant.assistant.name },
      model: row.model,
      prices: this.#deps.prices,
      processId: this.#deps.processId,
    };
    this.#scene = scene;
    this.#book = new ExchangeBook({ db: turn.db, changes: turn.changes }, exchangeScene, opened);
    const [context, tools] = await Promise.all([voiceInstructions(turn, scene), voiceTools(turn, scene, this.#book.held, this.#tally, this.#deps.approvalTimeoutMs, this.#abort.signal)]);
    this.#memories = context.memories;
    this.#tools = tools;
    if (this.#abort.signal.aborted) return;
    this.#timers.push(setTimeout(() => void this.end(CLOSE.maxMinutes), this.#deps.maxSessionMs));
    this.#timers.push(setInterval(() => this.#holdAnotherMinute(), this.#deps.minuteMs));
    for (const timer of this.#timers) timer.unref();
    const provider = new WebSocket(providerUrl(realtime.baseUrl, row.model), { ...PROVIDER_SOCKET, headers: realtime.apiKey ? { authorization: `Bearer ${realtime.apiKey}` } : {} });
    this.#provider = provider;
    provider.on('open', () => {
      provider.send(
        JSON.stringify({
          type: 'session.update',
          session: {
            type: 'realtime',
            model: row.model,
            instructions: context.instructions,
            audio: { input: { transcription: { model: INPUT_TRANSCRIPTION_MODEL } }, output: { voice: row.voice } },
            tools: realtimeToolsOf(tools),
            tool_choice: tools.toolChoice ?? 'auto',
          },
        }),
      );
      for (const { data, binary } of this.#pending) provider.send(data, binary ? BINARY : TEXT);
      this.#pending = [];
    });
    provider.on('message', (data, binary) => this.#fromProvider(data, binary));
    provider.on('close', () => void this.end(CLOSE.providerClosed));
    provider.on('error', (error) => {
      this.#deps.log.warn({ err: error, sessionId: row.id }, 'voice provider connection failed');
      void this.end(CLOSE.providerClosed);
    });
  }

  #fromClient(data: RawData, binary: boolean): void {
    if (!binary) {
      const type = peekType(data);
      if (type === 'session.update' || type === 'conversation.item.create') {
        const locked = lockedFieldsOf(parse(data));
        if (locked.length > 0) {
          this.#sendClient({
            type: 'error',
            error: { type: 'invalid_request_error', code: 'SESSION_FIELD_LOCKED', message: `The service sets ${locked.join(', ')} of this session; the event was dropped.` },
          });
          return;
        }
      }
    }
    const provider = this.#provider;
    if (provider?.readyState === WebSocket.OPEN) provider.send(data, binary ? BINARY : TEXT);
    else if (this.#pending.length < MAX_PENDING) this.#pending.push({ data, binary });
  }

  #fromProvider(data: RawData, binary: boolean): void {
    if (!binary) {
      const type = peekType(data);
      if (type && WATCHED_PROVIDER_EVENTS.has(type)) this.#watch(type, parse(data));
    }
    if (this.#client.readyState === WebSocket.OPEN) this.#client.send(data, binary ? BINARY : TEXT);
  }

  #watch(type: string, event: Record<string, unknown> | undefined): void {
    const book = this.#book;
    if (!event || !book) return;
    const draft = book.draft;
    switch (type) {
      case 'conversation.item.input_audio_transcription.completed':
        draft.question = joinText(draft.question, String(event.transcript ?? ''));
        draft.used = true;
        break;
      case 'response.output_audio_transcript.delta':
      case 'response.output_text.delta':
        draft.answer += String(event.delta ?? '');
        draft.used = true;
        break;
      case 'response.output_item.done': {
        const item = event.item as { type?: string; call_id?: string; name?: string; arguments?: string } | undefined;
        if (item?.type === 'function_call' && item.call_id && item.name) {
          const run = this.#runTool(item.call_id, item.name, item.arguments ?? '');
          this.#toolRuns.add(run);
          void run.finally(() => this.#toolRuns.delete(run));
        }
        break;
      }
      case 'response.done': {
        const response = event.response as { output?: Array<{ type?: string }> } | undefined;
        book.addUsage(usageOfResponse(response));
        const calls = (response?.output ?? []).some((item) => item.type === 'function_call');
        // An answer that asked for a tool goes on once the tool answers: the exchange ends with the last response.
        if (!calls && this.#runningTools === 0) this.#endExchange();
        break;
      }
    }
  }

  /** The exchange's record ends (complete, charged) and the next one opens; a refusal then ends the call. */
  #endExchange(): void {
    const book = this.#book!;
    const draft = book.takeDraft();
    const spent = { calls: this.#tools.calls, tally: this.#tally };
    this.#tally = newTally();
    this.#enqueue(async () => {
      await book.next(draft, spent, this.#memories);
      this.#tools = await voiceTools(this.#deps.turn, this.#scene!, book.held, this.#tally, this.#deps.approvalTimeoutMs, this.#abort.signal);
    });
  }

  /** The provider asked for a tool: it runs here (its approval card first when required), and the result goes back. */
  async #runTool(callId: string, name: string, rawArguments: string): Promise<void> {
    this.#runningTools++;
    this.#book!.draft.used = true;
    let output: string;
    try {
      // The exchange before may still be ending: the tools of this exchange's record (its card, its
      // record's calls) are in place once the record work queued so far is done.
      await this.#queue;
      const spec = this.#tools.specs.find((candidate) => candidate.key === name);
      if (!spec) output = toolFailureText(`no tool named ${name}`);
      else {
        const args = rawArguments ? (JSON.parse(rawArguments) as unknown) : {};
        output = (await spec.run(args, { callId, signal: this.#abort.signal, status: () => {} })).text;
      }
    } catch (error) {
      output = toolFailureText(error instanceof Error ? error.message : String(error));
    } finally {
      this.#runningTools--;
    }
    // Hung up meanwhile: nothing more is said.
    if (this.#abort.signal.aborted || this.#provider?.readyState !== WebSocket.OPEN) return;
    this.#provider.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } }));
    this.#provider.send(JSON.stringify({ type: 'response.create' }));
  }

  #holdAnotherMinute(): void {
    const book = this.#book;
    if (!book) return;
    this.#enqueue(() => book.holdAnotherMinute());
  }

  #enqueue(work: () => Promise<unknown>): void {
    this.#queue = this.#queue.then(work).catch((error: unknown) => {
      if (!(error instanceof AppError)) this.#deps.log.warn({ err: error, sessionId: this.id }, 'voice session record failed');
      void this.end(endingOf(error));
    });
  }

  #sendClient(event: object): void {
    if (this.#client.readyState === WebSocket.OPEN) this.#client.send(JSON.stringify(event));
  }

  /** Ends the call once: waiting cards cancelled (their tools never run), both sockets closed, the records settled. */
  end(ending: Ending): Promise<void> {
    this.#ended ??= this.#finish(ending);
    return this.#ended;
  }

  async #finish(ending: Ending): Promise<void> {
    this.#abort.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    if (this.#client.readyState === WebSocket.OPEN || this.#client.readyState === WebSocket.CONNECTING) this.#client.close(ending.code, ending.reason);
    this.#provider?.close();
    await Promise.all(this.#toolRuns);
    await this.#queue;
    const book = this.#book;
    try {
      if (book) await book.close(book.takeDraft(), { calls: this.#tools.calls, tally: this.#tally }, this.#memories);
      // Ended before the call took its record over: the record is given back here.
      else if (this.#row.recordId) await dropUnusedRecord(this.#deps.turn.db, this.#row.recordId);
    } catch (error) {
      this.#deps.log.warn({ err: error, sessionId: this.id }, 'voice session record not settled');
    }
    await endSession(this.#deps.turn.db, this.id, ending.reason).catch(() => {});
  }
}

function endingOf(error: unknown): Ending {
  if (error instanceof AppError && error.code === 'INSUFFICIENT_CREDITS') return CLOSE.noCredits;
  if (error instanceof AppError && error.code === 'USAGE_LIMIT_REACHED') return CLOSE.usageLimit;
  return CLOSE.failed;
}

function parse(data: RawData): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(data.toString()) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const joinText = (a: string, b: string) => (a && b ? `${a} ${b.trim()}` : a || b.trim());
