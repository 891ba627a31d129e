// The scaled shape's frame store: one Redis Stream per answer. Each flush of an answer is ONE entry
// whose id is `0-<seq of its last frame>` and whose field `t` holds the batch's frames (their JSON texts,
// one a line; field `l` instead, as the store's FrameLines pack them), so a seq maps to an entry id and
// `XRANGE key 0-<afterSeq> +` is a resume. The end is the field `e` on the last entry (or an entry of its
// own, id `0-*`). The stream is bounded (XADD MAXLEN ~),
// expires retentionSeconds after the end, and leaves a small `:gone` key for as long again so that an
// expired answer is told from an unknown one. Followers of every answer share one blocking XREAD
// connection per process; a new follower interrupts its block with CLIENT UNBLOCK.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ORPHAN_SEQ_GAP, type EncodedFrame, type FrameLines, type FrameStore, type Following, type LogMissing, type LogRead, type StoredBatch, type TextListener } from './stream-log.js';

export interface RedisStoreOptions {
  /** Key prefix of the answers' streams. */
  prefix?: string;
  /** XADD MAXLEN ~ bound, in entries (batches); Redis trims whole nodes, so a stream may hold a node more. */
  maxEntries?: number;
  /** TTL of a running answer's stream, in case its producer dies and nothing ends it. */
  runningTtlSeconds?: number;
  /** How long one blocking read waits before it looks again. */
  blockMs?: number;
  onError?: (error: unknown) => void;
  /** The frames' texts as lines of another form, in field `l` (default: as they come, in field `t`). */
  lines?: FrameLines;
}

type RawEntry = [id: string, fields: string[]];
interface Entry {
  /** The seq in the entry's id: its last frame's, or one past the last for an end of its own. */
  idSeq: number;
  /** The frames' JSON texts, in seq order. */
  frames: string[];
  end: boolean;
  /** The crash sweep's entry (field `o`): the last seq stored before it; its frames jump past the seqs between. */
  follows?: number;
}

/**
 * Field `t`: the batch's frames' texts joined by newlines (JSON.stringify never writes one), so a reader
 * can hand each frame's text out without parsing it; field `l`: the same as the store's `lines` packed
 * them (a reader of the same version unpacks them). Field `f` (a JSON array) is what earlier versions
 * wrote; it is still read, for the answers stored before an upgrade.
 */
const joinTexts = (texts: string[]): string => texts.join('\n');

function parseEntry([id, fields]: RawEntry, lines: FrameLines | undefined): Entry {
  let end = false;
  let frames: string[] = [];
  let follows: number | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    const value = fields[i + 1];
    if (fields[i] === 't') frames = value.split('\n');
    else if (fields[i] === 'l') frames = unpackLines(value, lines);
    else if (fields[i] === 'f') frames = (JSON.parse(value) as unknown[]).map((frame) => JSON.stringify(frame));
    else if (fields[i] === 'e') end = true;
    else if (fields[i] === 'o') follows = Number(value);
  }
  return { idSeq: Number(id.slice(id.indexOf('-') + 1)), frames, end, follows };
}

function unpackLines(value: string, lines: FrameLines | undefined): string[] {
  if (!lines) throw new Error('A stored batch has packed lines, and this store was given no way to read them');
  return value.split('\n').map((line) => lines.unpack(line));
}

/** The frames of an entry with their seqs; an end of its own has none. */
function numbered(entry: Entry): EncodedFrame[] {
  const first = entry.idSeq - entry.frames.length + 1;
  return entry.frames.map((json, i) => ({ seq: first + i, json }));
}

/** First seq an entry accounts for: its first frame, or its own position for an end without frames. */
const firstSeqOf = (entry: Entry): number => entry.idSeq - entry.frames.length + (entry.frames.length > 0 ? 1 : 0);
/** First seq a reader needs before this entry: the crash sweep's entry skips the seqs after the last stored one. */
const coversFrom = (entry: Entry): number => (entry.follows !== undefined ? entry.follows + 1 : firstSeqOf(entry));

const isConflict = (error: unknown): boolean => String(error).includes('equal or smaller');

/**
 * A flush's writes in one call. KEYS: each answer's stream and its `:gone` key. ARGV: MAXLEN, the running
 * TTL and the retention (ms), the texts' field (`t` or `l`), then per answer the entry id, its texts (''
 * for an end without frames) and 'f' (first write: the running TTL), 'e' (the end: retention and the
 * `:gone` marker) or ''. Answers per answer '' or the XADD's refusal; the TTLs are set either way, as the
 * pipeline before did.
 */
const WRITE_SCRIPT = `
local out = {}
for i = 1, #KEYS / 2 do
  local key, gone = KEYS[2 * i - 1], KEYS[2 * i]
  local id, texts, mode = ARGV[3 * i + 2], ARGV[3 * i + 3], ARGV[3 * i + 4]
  local added
  if texts == '' then added = redis.pcall('XADD', key, 'MAXLEN', '~', ARGV[1], id, 'e', '1')
  elseif mode == 'e' then added = redis.pcall('XADD', key, 'MAXLEN', '~', ARGV[1], id, ARGV[4], texts, 'e', '1')
  else added = redis.pcall('XADD', key, 'MAXLEN', '~', ARGV[1], id, ARGV[4], texts) end
  out[i] = type(added) == 'table' and added.err or ''
  if mode == 'e' then
    redis.call('PEXPIRE', key, ARGV[3])
    redis.call('SET', gone, '1', 'PX', 2 * tonumber(ARGV[3]))
  elseif mode == 'f' then
    redis.call('PEXPIRE', key, ARGV[2])
  end
end
return out
`;
const WRITE_SHA = createHash('sha1').update(WRITE_SCRIPT).digest('hex');

interface Follower {
  key: string;
  /** Last entry id seen (as its seq) and last frame delivered. */
  entryCursor: number;
  lastSeq: number;
  onFrames: TextListener;
  finish: (how: 'ended' | 'stopped') => void;
}

export function createRedisFrameStore(command: Redis, options: RedisStoreOptions = {}): FrameStore {
  const prefix = options.prefix ?? 'stream-log:';
  const maxEntries = options.maxEntries ?? 5_000;
  const lines = options.lines;
  const parseEntries = (raw: RawEntry[]): Entry[] => raw.map((entry) => parseEntry(entry, lines));
  const runningTtlMs = (options.runningTtlSeconds ?? 6 * 3600) * 1000;
  const blockMs = options.blockMs ?? 5_000;
  const onError = options.onError ?? ((error: unknown) => console.error('[stream-log] redis:', error));
  const keyOf = (answerId: string) => `${prefix}${answerId}`;
  const goneOf = (answerId: string) => `${prefix}${answerId}:gone`;
  /** Answers this process has written to and not ended: their running TTL is already set. */
  const started = new Set<string>();
  const followers = new Map<string, Set<Follower>>();
  let blocking: Redis | undefined;
  let blockingId: number | undefined;
  let reading = false;
  let loop: Promise<void> | undefined;
  let closed = false;

  function endCommands(pipeline: ReturnType<Redis['pipeline']>, answerId: string, retentionSeconds: number): void {
    const ms = Math.max(1, Math.round(retentionSeconds * 1000));
    pipeline.pexpire(keyOf(answerId), ms);
    pipeline.set(goneOf(answerId), '1', 'PX', ms * 2);
  }

  async function exec(pipeline: ReturnType<Redis['pipeline']> | ReturnType<Redis['multi']>): Promise<unknown[]> {
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    return results.map(([, value]) => value);
  }

  async function lastEntry(answerId: string): Promise<{ last?: Entry; gone: boolean }> {
    const [last, gone] = await exec(command.pipeline().xrevrange(keyOf(answerId), '+', '-', 'COUNT', 1).exists(goneOf(answerId)));
    const entries = last as RawEntry[];
    return { last: entries.length > 0 ? parseEntries(entries)[0] : undefined, gone: gone === 1 };
  }

  /** Entries holding the frames after afterSeq, or why there are none to give. */
  async function entriesAfter(answerId: string, afterSeq: number): Promise<{ entries: Entry[]; ended: boolean } | LogMissing> {
    // From the entry that may hold afterSeq itself: if it ended the answer, the reader must learn it.
    // One transaction, so a batch written meanwhile cannot fall between the range and the last entry.
    const [range, last, gone] = await exec(
      command.multi().xrange(keyOf(answerId), `0-${afterSeq}`, '+').xrevrange(keyOf(answerId), '+', '-', 'COUNT', 1).exists(goneOf(answerId)),
    );
    const raw = range as RawEntry[];
    if (raw.length === 0) {
      const lastEntries = last as RawEntry[];
      if (lastEntries.length === 0) return gone === 1 ? { kind: 'expired' } : { kind: 'unknown' };
      return { entries: [], ended: parseEntries(lastEntries)[0].end };
    }
    const entries = parseEntries(raw);
    const first = entries.find((entry) => entry.idSeq > afterSeq || entry.end);
    if (first && coversFrom(first) > afterSeq + 1) return { kind: 'truncated', firstSeq: firstSeqOf(first) };
    return { entries, ended: entries.some((entry) => entry.end) };
  }

  async function blockingConnection(): Promise<Redis> {
    if (blocking) return blocking;
    const connection = command.duplicate();
    connection.on('error', onError);
    // The id changes with each (re)connection; CLIENT UNBLOCK needs the current one.
    connection.on('ready', () => {
      connection.client('ID').then((id) => (blockingId = Number(id)), onError);
    });
    blocking = connection;
    blockingId = Number(await connection.client('ID'));
    return connection;
  }

  /** Interrupts the blocking read so it starts again with the current followers. */
  async function wake(): Promise<void> {
    // The UNBLOCK may overtake the XREAD it is meant for (two connections): try until one lands.
    while (reading && !closed && blockingId !== undefined) {
      const unblocked = await command.client('UNBLOCK', blockingId);
      if (unblocked === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  async function readLoop(): Promise<void> {
    const connection = await blockingConnection();
    while (!closed && followers.size > 0) {
      const keys = [...followers.keys()];
      const from = new Map(keys.map((key) => [key, Math.min(...[...followers.get(key)!].map((f) => f.entryCursor))]));
      const ids = keys.map((key) => `0-${from.get(key)}`);
      let reply: unknown;
      reading = true;
      try {
        reply = await connection.call('XREAD', 'COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', ...keys, ...ids);
      } catch (error) {
        if (closed) return;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      } finally {
        reading = false;
      }
      for (const [key, raw] of (reply as Array<[string, RawEntry[]]> | null) ?? []) {
        const entries = parseEntries(raw);
        for (const follower of [...(followers.get(key) ?? [])]) {
          // A follower that joined during this read may need entries before the ones it returned:
          // it is served by the next read, which starts from its cursor.
          if (follower.entryCursor < from.get(key)!) continue;
          deliver(follower, entries);
        }
      }
    }
  }

  /** Hands the follower the frames of these entries it has not had, in one call, and its end. */
  function deliver(follower: Follower, entries: Entry[]): void {
    const fresh: EncodedFrame[] = [];
    let ended = false;
    for (const entry of entries) {
      if (entry.idSeq <= follower.entryCursor && !entry.end) continue;
      for (const frame of numbered(entry)) {
        if (frame.seq <= follower.lastSeq) continue;
        follower.lastSeq = frame.seq;
        fresh.push(frame);
      }
      follower.entryCursor = Math.max(follower.entryCursor, entry.idSeq);
      if (entry.end) {
        ended = true;
        break;
      }
    }
    if (fresh.length > 0) {
      try {
        follower.onFrames(fresh);
      } catch (error) {
        // A reader's failure is its own: the producer and the other readers go on.
        onError(error);
      }
    }
    if (ended) follower.finish('ended');
  }

  function addFollower(follower: Follower): void {
    let set = followers.get(follower.key);
    if (!set) followers.set(follower.key, (set = new Set()));
    set.add(follower);
    if (loop) wake().catch(onError);
    else startLoop();
  }

  function startLoop(): void {
    loop = readLoop()
      .catch(onError)
      .finally(() => {
        loop = undefined;
        // A follower added as the loop was leaving (it had none left) needs a loop again.
        if (followers.size > 0 && !closed) startLoop();
      });
  }

  /** EVALSHA of the write script, loaded by EVAL when Redis does not have it (first use, restart). */
  async function runScript(keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await command.evalsha(WRITE_SHA, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return command.eval(WRITE_SCRIPT, keys.length, ...keys, ...args);
    }
  }

  return {
    kind: 'redis',
    async write(batches: StoredBatch[], retentionSeconds: number) {
      // One script call for every answer's batch: one command and one reply for ioredis to handle a
      // flush, where a command per XADD was most of what the log cost a process.
      const keys: string[] = [];
      const args: Array<string | number> = [maxEntries, Math.round(runningTtlMs), Math.max(1, Math.round(retentionSeconds * 1000)), lines ? 'l' : 't'];
      for (const { answerId, frames, end } of batches) {
        keys.push(keyOf(answerId), goneOf(answerId));
        const first = !end && !started.has(answerId);
        if (end) started.delete(answerId);
        else started.add(answerId);
        const texts = joinTexts(frames.map((frame) => (lines ? lines.pack(frame.json) : frame.json)));
        args.push(frames.length > 0 ? `0-${frames.at(-1)!.seq}` : '0-*', texts, end ? 'e' : first ? 'f' : '');
      }
      const refused = (await runScript(keys, args)) as string[];
      for (const message of refused) {
        // An entry already there (written by a try that failed after it landed, or the answer was
        // ended by the crash sweep): retrying cannot help, so it is reported and dropped.
        if (message && isConflict(message)) onError(new Error(message));
        else if (message) throw new Error(message);
      }
    },
    async read(answerId, afterSeq): Promise<LogRead<unknown, EncodedFrame>> {
      const found = await entriesAfter(answerId, afterSeq);
      if (!('entries' in found)) return found;
      const frames = found.entries.flatMap(numbered).filter((frame) => frame.seq > afterSeq);
      return { kind: 'frames', frames, ended: found.ended };
    },
    async follow(answerId, afterSeq, onFrames): Promise<Following | LogMissing> {
      const found = await entriesAfter(answerId, afterSeq);
      if (!('entries' in found)) return found;
      let resolve!: (how: 'ended' | 'stopped') => void;
      const done = new Promise<'ended' | 'stopped'>((r) => (resolve = r));
      let finished = false;
      const follower: Follower = {
        key: keyOf(answerId),
        entryCursor: afterSeq,
        lastSeq: afterSeq,
        onFrames,
        finish(how) {
          if (finished) return;
          finished = true;
          const set = followers.get(follower.key);
          set?.delete(follower);
          if (set?.size === 0) followers.delete(follower.key);
          resolve(how);
        },
      };
      // Replay what the range read; the blocking read then starts after the last entry it saw, so an
      // entry written between the two is read once, by the second.
      deliver(follower, found.entries);
      if (!finished) addFollower(follower);
      return { kind: 'following', done, stop: () => follower.finish('stopped') };
    },
    async endOrphan(answerId, frames, retentionSeconds) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const { last, gone } = await lastEntry(answerId);
        if (last?.end || (!last && gone)) return null;
        const lastSeq = last?.idSeq ?? 0;
        const fields = frames.length > 0 ? ['t', joinTexts(frames.map((frame) => JSON.stringify(frame))), 'e', '1', 'o', String(lastSeq)] : ['e', '1'];
        const lastOrphanSeq = lastSeq + ORPHAN_SEQ_GAP + frames.length;
        const id = frames.length > 0 ? `0-${lastOrphanSeq}` : '0-*';
        const pipeline = command.pipeline().xadd(keyOf(answerId), 'MAXLEN', '~', maxEntries, id, ...fields);
        endCommands(pipeline, answerId, retentionSeconds);
        try {
          await exec(pipeline);
          return frames.length > 0 ? lastOrphanSeq : null;
        } catch (error) {
          // The producer (or another sweeper) wrote after our look: look again.
          if (!isConflict(error)) throw error;
        }
      }
      throw new Error(`Could not end answer ${answerId}: its stream keeps moving`);
    },
    async stats() {
      let answers = 0;
      let entries = 0;
      let bytes = 0;
      let cursor = '0';
      do {
        const [next, keys] = await command.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys.filter((k) => !k.endsWith(':gone'))) {
          const [length, usage] = await exec(command.pipeline().xlen(key).memory('USAGE', key));
          answers++;
          entries += Number(length);
          bytes += Number(usage ?? 0);
        }
      } while (cursor !== '0');
      return { answers, entries, bytes };
    },
    async close() {
      closed = true;
      for (const set of [...followers.values()]) for (const follower of [...set]) follower.finish('stopped');
      if (blocking) {
        const connection = blocking;
        blocking = undefined;
        // A blocked XREAD would hold quit() until its timeout.
        connection.disconnect();
      }
      await loop;
    },
  };
}
