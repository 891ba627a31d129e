// PGlite parses, describes and plans every statement it is sent, in WebAssembly (in its own thread): a
// turn's large statements (its opening, its settle, the memory recall) took 2-4 ms each there, against
// ~0.2 ms for a one-row insert (docs/decisions.md, "Stream overhead"). Drizzle's prepared queries name
// nothing on the server, so this client does: a parameterised statement sent a second time is parsed
// once as a named statement on PGlite's one connection (which keeps it), its parameter types read once,
// and from then on only bound and executed. It speaks the extended protocol the way PGlite's own `query`
// does (the same locks, serializers, result parsing and error shape); only the `query` drizzle calls
// outside transactions goes through here, everything else is PGlite's own.
import { parse as results, protocol, type PGlite, type QueryOptions, type Results } from '@electric-sql/pglite';

/** Statements shorter than this gain little from a kept plan (parsing them is cheap). */
const MIN_TEXT = 200;
/** How many statements may be kept: our query shapes are a few hundred at most. */
const MAX_STATEMENTS = 1_000;

/** The parsers PGlite's result parsing takes: by type id. */
type ParserMap = Parameters<typeof results.parseResults>[1];

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

export function withKeptStatements(client: PGlite): PGlite {
  const locks = client as unknown as PGliteLocks;
  const entries = new Map<string, Entry>();
  let named = 0;

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

  async function runKept(entry: Entry, text: string, params: unknown[], options?: QueryOptions): Promise<Results<unknown>> {
    await locks._checkReady();
    return locks._runExclusiveTransaction(() =>
      locks._runExclusiveQuery(async () => {
        entry.kept ??= await keep(text);
        const { name, paramTypes } = entry.kept;
        const values = params.map((value, index) => {
          if (value === null || value === undefined) return null;
          const serialize = options?.serializers?.[paramTypes[index]] ?? client.serializers[paramTypes[index]];
          return serialize ? serialize(value) : String(value);
        });
        // Bind, describe, execute and sync in one message: one pass through PGlite's backend instead of
        // four (an error in any of them still ends at the sync, which leaves the connection ready).
        const messages = await send(
          concatMessages([
            protocol.serialize.bind({ statement: name, values }),
            protocol.serialize.describe({ type: 'P' }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
        );
        if (!locks.isInTransaction()) await client.syncToFs();
        // A query's own parsers, merged into PGlite's once (its parsing would copy its ~320 parsers per query).
        const parsers = options?.parsers ? mergedParsers(options.parsers as ParserMap) : (client.parsers as ParserMap);
        return results.parseResults(messages, parsers, options?.parsers ? { ...options, parsers: undefined } : options)[0] as Results<unknown>;
      }),
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

  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'query') return query;
      // New array types change PGlite's parsers: merge afresh after.
      if (property === 'refreshArrayTypes') return () => target.refreshArrayTypes().finally(() => (merged = new WeakMap()));
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
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
