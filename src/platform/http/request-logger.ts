// Each request's logger, made only when something is logged through it. Fastify gives every request a
// child of the service's logger carrying its reqId; pino makes a child by serializing the bindings and
// setting a method for every level on a new object, on every request, and nearly every request logs
// nothing but its one request line, which request-log.ts writes itself through `writeInfoLine`.
// The first call of any logging method makes the pino child, and everything goes through it from then on.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

const { streamSym, chindingsSym } = pino.symbols;
const INFO = 30;

/** Where a pino logger writes its lines. */
export interface Destination {
  write(line: string): unknown;
}

export class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #made: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #logger(): FastifyBaseLogger {
    return (this.#made ??= this.#parent.child(this.#bindings, this.#options));
  }

  #forward(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    const logger = this.#logger();
    Reflect.apply(logger[level], logger, args);
  }

  get level(): string {
    return this.#made?.level ?? this.#options?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#forward('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#forward('error', args);
  }
  warn(...args: unknown[]): void {
    this.#forward('warn', args);
  }
  info(...args: unknown[]): void {
    this.#forward('info', args);
  }
  debug(...args: unknown[]): void {
    this.#forward('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#forward('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }

  /** {@link writeInfoLine} for this logger: through its pino child once made, else its parent's parts and its own bindings. */
  writeInfoLine<A, B>(line: Line<A, B>, a: A, b: B): boolean {
    if (this.#made) return writeThroughPino(this.#made, undefined, undefined, line, a, b);
    return writeThroughPino(this.#parent, this.#bindings, this.#options?.level, line, a, b);
  }
}

/** Builds a line from the logger's bindings as pino writes them after `time` (`,"pid":…,"hostname":…,"reqId":…`). */
export type Line<A, B> = (bindings: string, a: A, b: B) => string;

/**
 * Writes `line(bindings, a, b)` to the destination of a request's logger (a RequestLogger, or a pino
 * logger as it is) if it writes info lines; false when it is not pino (then log through its methods).
 * No object is made on the way: the line's arguments are passed through, not closed over.
 */
export function writeInfoLine<A, B>(logger: FastifyBaseLogger, line: Line<A, B>, a: A, b: B): boolean {
  if (logger instanceof RequestLogger) return logger.writeInfoLine(line, a, b);
  return writeThroughPino(logger, undefined, undefined, line, a, b);
}

/** Through a pino logger's destination and bindings (plus `own`, at `level` instead of its own when given). */
function writeThroughPino<A, B>(logger: FastifyBaseLogger, own: Bindings | undefined, level: string | undefined, line: Line<A, B>, a: A, b: B): boolean {
  const pinoLogger = logger as FastifyBaseLogger & { levelVal?: unknown; levels?: pino.LevelMapping; [key: symbol]: unknown };
  const destination = pinoLogger[streamSym] as Destination | undefined;
  const bindings = pinoLogger[chindingsSym];
  const levelValue = level === undefined ? pinoLogger.levelVal : pinoLogger.levels?.values[level];
  if (!destination || typeof bindings !== 'string' || typeof levelValue !== 'number') return false;
  if (levelValue > INFO) return true;
  destination.write(line(own === undefined ? bindings : bindings + jsonBindings(own), a, b));
  return true;
}

/** `,"key":value` for each binding, as pino writes a child's. */
function jsonBindings(bindings: Bindings): string {
  let text = '';
  for (const key in bindings) {
    const value = bindings[key];
    text += `,${jsonString(key)}:${typeof value === 'string' ? jsonString(value) : JSON.stringify(value)}`;
  }
  return text;
}

/** What JSON.stringify escapes in a string (and, to be safe, either half of a surrogate pair). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(value)` for a line's field: a string with nothing to escape (nearly every method, url,
 * host, address and request id) is quoted as it is, without the general path (~70 ns a field, most of
 * the request line's cost).
 */
export function jsonString(value: string | string[]): string {
  return typeof value === 'string' && !ESCAPED.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** Fastify's `childLoggerFactory`: a request's logger, made when it is first used. */
export function requestLoggerFactory(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options);
}
