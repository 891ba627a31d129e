// JSON bodies: an empty body sent with Content-Type application/json counts as no body (clients of
// "no body" routes often send the header anyway). Prototype keys that JSON.parse keeps as own
// properties are refused afterwards by the body guard.
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from './errors.js';

export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new BadRequestError('Body is not valid JSON', 'INVALID_JSON'), undefined);
    }
  });
}
