// The request log: one line a request, written when its answer has gone out, holding what Fastify's
// two default lines ("incoming request", "request completed") held between them: the request (method,
// url, host, remote address and port), the status and the time taken, under the request's reqId.
// The url's credential-like query values are never written (log-redaction.ts).
// Half the lines for the same facts: on a cached route the second line cost as much as the route's
// own work (docs/decisions.md, "HTTP"). Errors, aborts and everything else Fastify logs
// are unchanged.
//
// The line of a request that went well is the one written on every request, so it is put together
// here as text, in the shape pino writes (level, time, the logger's bindings, then the fields), and
// handed to the logger's destination: pino's general path (serializers building objects, then
// stringifying them key by key) cost a cached route ~15 µs of its ~85 (docs/decisions.md,
// "HTTP"). The request's logger (request-logger.ts, made only when used) hands the line its bindings
// and writes it to its destination, with no object made on the way. When the logger is not pino (no
// destination to hand it to), the line goes through the logger as before.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl } from './log-redaction.js';
import { jsonString, writeInfoLine } from './request-logger.js';

/** Something done once each answer has gone out (the request metrics), before the request line. */
export type AnswerObserver = (request: FastifyRequest, reply: FastifyReply) => void;

export class OneLineRequestLog extends LogController {
  #observers: AnswerObserver[] = [];

  override incomingRequest(): void {}

  /**
   * Runs `observe` once each answer has gone out, in the same step as the request line: what an
   * onResponse hook would do, without Fastify's onResponse step on every request (docs/decisions.md, "HTTP").
   */
  afterEachAnswer(observe: AnswerObserver): void {
    this.#observers.push(observe);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const observers = this.#observers;
    for (let i = 0; i < observers.length; i++) observers[i]!(request, reply);
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    if (!writeInfoLine(reply.log, completedLine, request, reply)) {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

/**
 * pino's line for `log.info({ req, res, responseTime }, 'request completed')` with Fastify's serializers:
 * `bindings` is the logger's own (`,"pid":…,"hostname":…,"reqId":…`, already JSON); the request's
 * fields a client chooses (url, host, the accept-version header, a forwarded address) are escaped, and
 * the url's credential-like query values redacted (log-redaction.ts), as the `req` serializer does.
 */
export function completedLine(bindings: string, request: FastifyRequest, reply: FastifyReply): string {
  const version = request.headers['accept-version'];
  const { host, ip } = request;
  const port = request.socket?.remotePort;
  return (
    `{"level":30,"time":${Date.now()}${bindings},"req":{"method":${jsonString(request.method)},"url":${jsonString(redactUrl(request.url))}` +
    (version === undefined ? '' : `,"version":${jsonString(version)}`) +
    (host === undefined ? '' : `,"host":${jsonString(host)}`) +
    (ip === undefined ? '' : `,"remoteAddress":${jsonString(ip)}`) +
    (port === undefined ? '' : `,"remotePort":${port}`) +
    `},"res":{"statusCode":${reply.statusCode}},"responseTime":${reply.elapsedTime},"msg":"request completed"}\n`
  );
}
