// PGlite parses, describes and plans every statement it is sent, in WebAssembly (in its own thread): a
// turn's large statements (its opening, its settle, the memory recall) took 2-4 ms each there, against
// ~0.2 ms for a one-row insert (docs/decisions.md, "The embedded database thread"). Drizzle's prepared queries name
// nothing on the server, so this client does: a parameterised statement sent a second time is parsed
// once as a named statement on PGlite's one connection (which keeps it), its parameter types read once,
// and from then on only bound and executed. It speaks the extended protocol the way PGlite's own `query`
// does (the same locks, serializers, result parsing and error shape); only the `query` drizzle calls
// outside transactions goes through here, everything else is PGlite's own. Kept statements that wait
// together run as a group (queryGroup): one message and one commit for all (docs/decisions.md).
import { parse as results, protocol, type PGlite, type QueryOptions, type Results } from '@electric-sql/pglite';

/** Statements shorter than this gain little from a kept plan (parsing them is cheap). */
const MIN_TEXT = 200;
/** How many statements may be kept: our query shapes are a few hundred at most. */
const MAX_STATEMENTS = 1_000;

/** The parsers PGlite's result parsing takes: by type id. */
type ParserMap = Parameters<typeof results.parseResults>[1];
/** The backend messages PGlite's protocol parser gives. */
type BackendMessage = Parameters<typeof results.parseResults>[0][number];

interface Kept {
  name: string;
  paramTypes: number[];
}

interface Entry {
  seen: number;
  kept?: Kept;
  /** Naming it failed: it runs as it comes, always. */
  refused?: boolean;
}

/** The members of PGlite its own `query` uses to take its locks (public in JavaScript, marked internal). */
interface PGliteLocks {
  _checkReady(): Promise<void>;
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
  isInTransaction(): boolean;
}

/**
 * The last statement of every group. A statement may set `synchronous_commit` off for its own
 * transaction (the turn's opening does, docs/decisions.md); in a group that transaction is shared, so
 * the group sets it back to the session's value: one statement's choice never makes another's commit
 * (a turn's charge) skip the WAL.
 */
const CLOSING_TEXT = `select set_config('synchronous_commit', $1, true) /* the end of a group */`;

/** A statement of a group: as `query` takes it. */
export interface GroupStatement {
  text: string;
  params: unknown[];
  options?: QueryOptions;
}

/** One statement's answer in a group: its result, or the error it would have thrown alone. */
export type GroupAnswer = { ok: true; result: Results<unknown> } | { ok: false; error: unknown };

/** PGlite with kept statements, and the group runner of kept ones. */
export type KeptClient = PGlite & {
  queryGroup(statements: GroupStatement[]): Promise<GroupAnswer[]>;
  isKept(text: string): boolean;
};

export function withKeptStatements(client: PGlite): KeptClient {
  const locks = client as unknown as PGliteLocks;
  const entries = new Map<string, Entry>();
  let named = 0;

  /** The session's `synchronous_commit`, and the kept statement that restores it at the end of each group. */
  let commitSetting: string | undefined;
  let closing: Kept | undefined;

  /** PGlite's parsers with a query's own on top, by the query's parser object (the caller passes the same one each time). */
  let merged = new WeakMap<object, ParserMap>();
  const mergedParsers = (own: ParserMap): ParserMap => {
    let parsers = merged.get(own);
    if (!parsers) merged.set(own, (parsers = { ...client.parsers, ...own }));
    return parsers;
  };

  const send = async (message: Uint8Array) => (await client.execProtocol(message, { syncToFs: false })).messages;

  /** Parses `text` as a named statement and reads its parameter types; inside the query lock. */
  async function keep(text: string): Promise<Kept> {
    const name = `dt_kept_${++named}`;
    try {
      await send(protocol.serialize.parse({ name, text }));
      const described = await send(protocol.serialize.describe({ type: 'S', name }));
      return { name, paramTypes: results.parseDescribeStatementResults(described) };
    } finally {
      await send(protocol.serialize.sync());
    }
  }

  /** The values of a kept statement's parameters, as PGlite's own query serializes them. */
  function valuesOf(kept: Kept, params: unknown[], options?: QueryOptions): Array<string | null> {
    return params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serialize = options?.serializers?.[kept.paramTypes[index]] ?? client.serializers[kept.paramTypes[index]];
      return serialize ? (serialize(value) as string) : String(value);
    });
  }

  /** Bind, describe and execute of a kept statement: one statement's part of a message. */
  function executePart(kept: Kept, params: unknown[], options?: QueryOptions): Uint8Array {
    return bindDescribeExecute(kept.name, valuesOf(kept, params, options));
  }

  /** A statement's answer from its messages, with its own parsers over PGlite's. */
  function resultOf(messages: BackendMessage[], options?: QueryOptions): Results<unknown> {
    // A query's own parsers, merged into PGlite's once (its parsing would copy its ~320 parsers per query).
    const parsers = options?.parsers ? mergedParsers(options.parsers as ParserMap) : (client.parsers as ParserMap);
    return results.parseResults(messages, parsers, options?.parsers ? { ...options, parsers: undefined } : options)[0] as Results<unknown>;
  }

  /** Runs one kept statement; inside the query lock. */
  async function execKept(entry: Entry, text: string, params: unknown[], options?: QueryOptions): Promise<Results<unknown>> {
    entry.kept ??= await keep(text);
    // Bind, describe, execute and sync in one message: one pass through PGlite's backend instead of
    // four (an error in any of them still ends at the sync, which leaves the connection ready).
    const messages = await send(concatMessages([executePart(entry.kept, params, options), protocol.serialize.sync()]));
    if (!locks.isInTransaction()) await client.syncToFs();
    return resultOf(messages, options);
  }

  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    await locks._checkReady();
    return locks._runExclusiveTransaction(() => locks._runExclusiveQuery(fn));
  };

  const runKept = (entry: Entry, text: string, params: unknown[], options?: QueryOptions) =>
    exclusive(() => execKept(entry, text, params, options));

  /**
   * Statements already kept, run together: their binds and executes in one message with one sync, so
   * PostgreSQL runs them as one implicit transaction with one commit and PGlite's backend is entered
   * once. If any of them fails the whole group is rolled back, and each is run again on its own, so each
   * answers exactly what it would have answered alone.
   */
  async function queryGroup(statements: GroupStatement[]): Promise<GroupAnswer[]> {
    const keptEntries = statements.map((statement) => entries.get(statement.text));
    if (statements.length < 2 || keptEntries.some((entry) => !entry?.kept)) return alone(statements);
    commitSetting ??= String((await client.query<{ synchronous_commit: string }>('show synchronous_commit')).rows[0]!.synchronous_commit);
    return exclusive(async () => {
      let messages: BackendMessage[];
      try {
        closing ??= await keep(CLOSING_TEXT);
        const parts = statements.map((statement, index) => executePart(keptEntries[index]!.kept!, statement.params, statement.options));
        messages = await send(concatMessages([...parts, executePart(closing, [commitSetting]), protocol.serialize.sync()]));
      } catch {
        return eachAlone(statements, keptEntries as Entry[]);
      }
      if (!locks.isInTransaction()) await client.syncToFs();
      const answers: GroupAnswer[] = [];
      let start = 0;
      messages.forEach((message, index) => {
        if (message.name !== 'commandComplete') return;
        const statement = statements[answers.length];
        if (statement) answers.push({ ok: true, result: resultOf(messages.slice(start, index + 1), statement.options) });
        start = index + 1;
      });
      if (answers.length !== statements.length) throw new Error(`a group of ${statements.length} statements answered ${answers.length} results`);
      return answers;
    });
  }

  /** Each statement of a failed group on its own, in order, still inside the lock. */
  async function eachAlone(statements: GroupStatement[], kept: Entry[]): Promise<GroupAnswer[]> {
    const answers: GroupAnswer[] = [];
    for (const [index, statement] of statements.entries()) {
      try {
        answers.push({ ok: true, result: await execKept(kept[index]!, statement.text, statement.params, statement.options) });
      } catch (error) {
        answers.push({ ok: false, error });
      }
    }
    return answers;
  }

  /** Statements that cannot run as a group, one after another through `query`. */
  async function alone(statements: GroupStatement[]): Promise<GroupAnswer[]> {
    return Promise.all(
      statements.map((statement) =>
        query(statement.text, statement.params, statement.options).then(
          (result): GroupAnswer => ({ ok: true, result }),
          (error: unknown): GroupAnswer => ({ ok: false, error }),
        ),
      ),
    );
  }

  const query = (async (text: string, params?: unknown[], options?: QueryOptions) => {
    if (!params || params.length === 0 || text.length < MIN_TEXT) return client.query(text, params, options);
    let entry = entries.get(text);
    if (!entry) {
      if (entries.size >= MAX_STATEMENTS) return client.query(text, params, options);
      entries.set(text, (entry = { seen: 0 }));
    }
    // Once is not yet a shape: a statement sent once (a migration, an admin's search) is never kept.
    if (entry.refused || (++entry.seen < 2 && !entry.kept)) return client.query(text, params, options);
    try {
      return await runKept(entry, text, params, options);
    } catch (error) {
      if (entry.kept) throw error; // the statement's own failure, as PGlite's query would answer it
      entry.refused = true; // naming it failed: run it as it came
      return client.query(text, params, options);
    }
  }) as PGlite['query'];

  /** Whether a statement is kept: it can run in a group. */
  const isKept = (text: string) => entries.get(text)?.kept !== undefined;

  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'query') return query;
      if (property === 'queryGroup') return queryGroup;
      if (property === 'isKept') return isKept;
      // New array types change PGlite's parsers: merge afresh after.
      if (property === 'refreshArrayTypes') return () => target.refreshArrayTypes().finally(() => (merged = new WeakMap()));
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as KeptClient;
}

/** A describe of the unnamed portal, then its execute with no row limit: the same bytes every time. */
const DESCRIBE_EXECUTE = Buffer.from([0x44, 0, 0, 0, 6, 0x50, 0, 0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]);

/**
 * The bind of a named statement to the unnamed portal with text values (null as SQL NULL), then its
 * describe and execute: the bytes of PGlite's own serializers (which also list each value's format, all
 * text, where none listed means the same), written into one buffer. PGlite's took about 60 µs for a
 * settle's 25 values and its answer's text, a new buffer for every value grown by copying; this about 6.
 */
function bindDescribeExecute(statement: string, values: Array<string | null>): Uint8Array {
  const lengths = new Array<number>(values.length);
  // Type, length, portal "" and the statement's name, no format codes, the values' count, ..., no result formats.
  let size = 1 + 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 + 2;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    const length = value === null || value === undefined ? -1 : Buffer.byteLength(value);
    lengths[index] = length;
    size += 4 + Math.max(length, 0);
  }
  const message = Buffer.allocUnsafe(size + DESCRIBE_EXECUTE.length);
  let at = message.writeUInt8(0x42, 0);
  at = message.writeInt32BE(size - 1, at);
  at = message.writeUInt8(0, at);
  at += message.write(statement, at, 'utf8');
  at = message.writeUInt8(0, at);
  at = message.writeInt16BE(0, at);
  at = message.writeUInt16BE(values.length, at);
  for (let index = 0; index < values.length; index++) {
    at = message.writeInt32BE(lengths[index]!, at);
    if (lengths[index]! > 0) at += message.write(values[index]!, at, 'utf8');
  }
  at = message.writeInt16BE(0, at);
  DESCRIBE_EXECUTE.copy(message, at);
  return message;
}

function concatMessages(parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
