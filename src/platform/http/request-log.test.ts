// The request line put together as text (request-log.ts) against the line pino itself writes for the
// same request through Fastify's serializers: the same fields and values, whatever a client puts in
// the url, Host or accept-version, and still one JSON line. Below info nothing is written; a failed
// request keeps pino's own error line before it.
import { Writable } from 'node:stream';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactUrl, withLogRedaction } from './log-redaction.js';
import { OneLineRequestLog } from './request-log.js';
import { jsonString, requestLoggerFactory } from './request-logger.js';

/** pino's own line, as Fastify's default controller would write it in one line. */
class PinoRequestLog extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

interface Sent {
  url: string;
  headers?: Record<string, string>;
}

/** The lines of these requests; `lazy`: each request's logger made only when used, as the service runs (request-logger.ts). */
async function linesOf(controller: LogController, level: string, requests: Sent[], lazy = false, redacting = false): Promise<string[]> {
  let text = '';
  const stream = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
  const factory = lazy ? { childLoggerFactory: requestLoggerFactory } : {};
  const logger = redacting ? withLogRedaction({ level, stream }) : { level, stream };
  const app = Fastify({ logger, logController: controller, genReqId: () => 'req-fixed', ...factory });
  app.get('/*', async () => ({ ok: true }));
  app.get('/fails', async () => {
    throw new Error('the route failed');
  });
  app.get('/logs', async (request) => {
    request.log.warn({ step: 1 }, 'a warning of the route');
    request.log.child({ part: 'inner' }).info('from a child');
    return { ok: true };
  });
  app.get('/quiet', { logLevel: 'warn' }, async () => ({ ok: true }));
  for (const request of requests) await app.inject({ method: 'GET', url: request.url, headers: request.headers, remoteAddress: '10.1.2.3' });
  await app.close();
  return text.split('\n').filter(Boolean);
}

const comparable = (line: string) => {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  expect(parsed.time).toEqual(expect.any(Number));
  expect(parsed.responseTime).toEqual(expect.any(Number));
  return { ...parsed, time: 0, responseTime: 0 };
};

describe('the request line', () => {
  const awkward: Sent[] = [
    { url: '/plain' },
    { url: '/a?q=%22quoted%22&b=\\back', headers: { host: 'h"ost\\name:81', 'accept-version': '1"\n2' } },
    { url: '/caf%C3%A9?x=ü', headers: { host: 'exämple.org' } },
  ];

  it('is what pino writes for the same request, one JSON line each', async () => {
    const ours = await linesOf(new OneLineRequestLog(), 'info', awkward);
    const pinos = await linesOf(new PinoRequestLog(), 'info', awkward);
    expect(ours).toHaveLength(awkward.length);
    expect(ours.map(comparable)).toEqual(pinos.map(comparable));
    expect(JSON.parse(ours[1]!)).toMatchObject({
      level: 30,
      reqId: 'req-fixed',
      req: { method: 'GET', url: '/a?q=%22quoted%22&b=\\back', version: '1"\n2', host: 'h"ost\\name:81', remoteAddress: '10.1.2.3' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
  });

  it('is the same through the request loggers made only when used', async () => {
    const ours = await linesOf(new OneLineRequestLog(), 'info', awkward, true);
    const pinos = await linesOf(new PinoRequestLog(), 'info', awkward);
    expect(ours.map(comparable)).toEqual(pinos.map(comparable));
  });

  it('keeps what a route logs itself, under the request id, before the request line', async () => {
    for (const lazy of [true, false]) {
      const lines = (await linesOf(new OneLineRequestLog(), 'info', [{ url: '/logs' }], lazy)).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toMatchObject([
        { level: 40, reqId: 'req-fixed', step: 1, msg: 'a warning of the route' },
        { level: 30, reqId: 'req-fixed', part: 'inner', msg: 'from a child' },
        { level: 30, reqId: 'req-fixed', req: { url: '/logs' }, msg: 'request completed' },
      ]);
    }
  });

  it('is not written below info, for the logger or for a route', async () => {
    expect(await linesOf(new OneLineRequestLog(), 'warn', awkward)).toEqual([]);
    expect(await linesOf(new OneLineRequestLog(), 'warn', awkward, true)).toEqual([]);
    expect(await linesOf(new OneLineRequestLog(), 'info', [{ url: '/quiet' }], true)).toEqual([]);
    expect(await linesOf(new PinoRequestLog(), 'info', [{ url: '/quiet' }])).toEqual([]);
  });

  it('quotes a field as JSON.stringify does, whatever its characters', () => {
    const fields = ['GET', '/plain', '', 'q"uote', 'back\\slash', 'tab\there', '\u0000\u001f\u007f', 'exämple.org', '😀 pair', 'lone \ud800', 'lone \udc00 end', '\u2028\u2029'];
    for (const field of fields) expect(jsonString(field)).toBe(JSON.stringify(field));
    expect(jsonString(['1', '2'])).toBe(JSON.stringify(['1', '2']));
  });

  it('of a failed request follows pino’s own error line, with its status', async () => {
    const lines = (await linesOf(new OneLineRequestLog(), 'info', [{ url: '/fails' }])).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { level: 50, msg: 'the route failed', err: { message: 'the route failed' }, res: { statusCode: 500 } },
      { level: 30, msg: 'request completed', req: { url: '/fails' }, res: { statusCode: 500 } },
    ]);
  });
});

describe('credentials in the url', () => {
  const secrets = ['S3cr3tT0k3n', 'AcCeSs-1', 'k3y-v4lue', 'hunter2', 'AMZSIG', 'st4te', 'c0de', 'enc0ded'];
  const sensitive: Sent[] = [
    { url: `/api/user/data/export/abc/download?token=${secrets[0]}` },
    { url: `/reset-password?page=2&access_token=${secrets[1]}&apiKey=${secrets[2]}` },
    { url: `/x?Password=${secrets[3]}&X-Amz-Signature=${secrets[4]}&keep=visible` },
    { url: `/api/auth/oauth/school/callback?state=${secrets[5]}&code=${secrets[6]}&iss=http%3A%2F%2Fidp` },
    { url: `/x?acc%65ss_TOKEN=${secrets[7]}&flag&empty=` },
  ];

  it('are redacted in the request line, the rest of the url kept', async () => {
    const lines = await linesOf(new OneLineRequestLog(), 'info', sensitive, true, true);
    expect(lines).toHaveLength(sensitive.length);
    for (const secret of secrets) expect(lines.join('\n')).not.toContain(secret);
    expect(lines.map((line) => (JSON.parse(line) as { req: { url: string } }).req.url)).toEqual([
      `/api/user/data/export/abc/download?token=${REDACTED}`,
      `/reset-password?page=2&access_token=${REDACTED}&apiKey=${REDACTED}`,
      `/x?Password=${REDACTED}&X-Amz-Signature=${REDACTED}&keep=visible`,
      `/api/auth/oauth/school/callback?state=${REDACTED}&code=${REDACTED}&iss=http%3A%2F%2Fidp`,
      `/x?acc%65ss_TOKEN=${REDACTED}&flag&empty=`,
    ]);
  });

  it('are written as pino writes them through the redacting serializer', async () => {
    const ours = await linesOf(new OneLineRequestLog(), 'info', sensitive, false, true);
    const pinos = await linesOf(new PinoRequestLog(), 'info', sensitive, false, true);
    expect(ours.map(comparable)).toEqual(pinos.map(comparable));
  });

  it("are redacted in a failed request's error line too", async () => {
    const lines = await linesOf(new OneLineRequestLog(), 'info', [{ url: `/fails?session_token=${secrets[0]}` }], true, true);
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain(secrets[0]);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toMatchObject([
      { level: 50, req: { url: `/fails?session_token=${REDACTED}` }, msg: 'the route failed' },
      { level: 30, req: { url: `/fails?session_token=${REDACTED}` }, msg: 'request completed' },
    ]);
  });

  it('leaves a url without such a parameter as it is (the same string)', () => {
    for (const url of ['/plain', '/a?q=1&page=2', '/a?', '/a?=x&&b=2']) expect(redactUrl(url)).toBe(url);
  });
});
