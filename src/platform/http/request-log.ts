// The request log: one line a request, written when its answer has gone out, holding what Fastify's
// two default lines ("incoming request", "request completed") held between them: the request (method,
// url, host, remote address and port), the status and the time taken, under the request's reqId.
// Half the lines for the same facts: on a cached route the second line cost as much as the route's
// own work (docs/decisions.md, "The request log"). Errors, aborts and everything else Fastify logs
// are unchanged.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
