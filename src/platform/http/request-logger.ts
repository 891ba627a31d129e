// Each request's logger, made only when something is logged through it. Fastify gives every request a
// child of the service's logger carrying its reqId; pino makes a child by serializing the bindings and
// setting a method for every level on a new object, on every request, and nearly every request logs
// nothing but its one request line, which request-log.ts writes itself from the parts `lineParts` names.
// The first call of any logging method makes the pino child, and everything goes through it from then on.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

const { streamSym, chindingsSym } = pino.symbols;

/** Where a pino logger writes its lines. */
export interface Destination {
  write(line: string): unknown;
}

/** What a line written without pino needs: where to, the logger's bindings as JSON, and its level's value. */
export interface LineParts {
  destination: Destination;
  /** `,"pid":…,"hostname":…,"reqId":…`: the bindings as pino writes them after `time`. */
  bindings: string;
  levelValue: number;
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

  /** The parts of this logger's lines, when it writes through pino (else undefined: log through the methods). */
  lineParts(): LineParts | undefined {
    if (this.#made) return pinoLineParts(this.#made);
    const parent = pinoLineParts(this.#parent, this.#options?.level);
    if (!parent) return undefined;
    for (const key in this.#bindings) parent.bindings += `,${JSON.stringify(key)}:${JSON.stringify(this.#bindings[key])}`;
    return parent;
  }
}

/** The line parts of any request's logger: a RequestLogger, or a pino logger as it is. */
export function linePartsOf(logger: FastifyBaseLogger): LineParts | undefined {
  return logger instanceof RequestLogger ? logger.lineParts() : pinoLineParts(logger);
}

/** A pino logger's parts (at `level` instead of its own, when given), a new object; undefined when it is not pino. */
function pinoLineParts(logger: FastifyBaseLogger, level?: string): LineParts | undefined {
  const { levelVal, levels } = logger as FastifyBaseLogger & { levelVal?: unknown; levels?: pino.LevelMapping };
  const destination = Reflect.get(logger, streamSym) as Destination | undefined;
  const bindings: unknown = Reflect.get(logger, chindingsSym);
  const levelValue = level === undefined ? levelVal : levels?.values[level];
  if (!destination || typeof bindings !== 'string' || typeof levelValue !== 'number') return undefined;
  return { destination, bindings, levelValue };
}

/** Fastify's `childLoggerFactory`: a request's logger, made when it is first used. */
export function requestLoggerFactory(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options);
}
