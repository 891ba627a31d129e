// One place maps every error to the failure body {success: false, message, code?, error?}.
// Schema errors name the failing field; a 500 says only "Something went wrong" and logs the cause
// under the request id.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { AppError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Message of a 400 schema error on this route when the spec fixes one (e.g. "Invalid Properties"). */
    validationMessage?: string;
  }
}

export interface FailureBody {
  success: false;
  message: string;
  code?: string;
  error?: string | Record<string, unknown>;
  [extra: string]: unknown;
}

export function failure(message: string, code?: string, error?: FailureBody['error']): FailureBody {
  const body: FailureBody = { success: false, message };
  if (code) body.code = code;
  if (error !== undefined) body.error = error;
  return body;
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) {
      if (error.status === 429) reply.header('retry-after', '60');
      return reply.status(error.status).send({ ...failure(error.message, error.code, error.detail), ...error.extra });
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const context = (error as FastifyError).validationContext ?? 'body';
      const issues = error.validation.map((issue) => ({
        field: fieldName(context, issue.instancePath),
        message: issue.message ?? 'is invalid',
      }));
      const first = issues[0];
      const message =
        request.routeOptions.config?.validationMessage ?? `Invalid ${first.field}: ${first.message}`;
      return reply.status(400).send(failure(message, 'VALIDATION_FAILED', { field: first.field, issues }));
    }
    if (isResponseSerializationError(error)) {
      request.log.error({ err: error, reqId: request.id }, 'response did not match its schema');
      return reply.status(500).send(failure('Something went wrong'));
    }
    const status = (error as FastifyError).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, body too large, bad content type, poisoned keys.
      const { message, code } = clientFailure(error as FastifyError);
      return reply.status(status).send(failure(message, code));
    }
    request.log.error({ err: error, reqId: request.id }, 'request failed');
    return reply.status(500).send(failure('Something went wrong'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(failure(`Route ${request.method} ${request.url.split('?')[0]} not found`, 'ROUTE_NOT_FOUND'));
  });
}

/**
 * Errors the router raises before any route or hook runs (Fastify's `frameworkErrors`): a URL whose
 * percent-encoding does not decode (400) and a path parameter past the router's length limit (414).
 * Fastify's own bodies for these are outside the failure shape.
 */
export function sendFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.status(414).send(failure('A path parameter is too long', 'PARAM_TOO_LONG'));
    return;
  }
  reply.status(error.statusCode && error.statusCode < 500 ? error.statusCode : 400).send(failure('The URL is not valid (malformed percent-encoding)', 'INVALID_URL'));
}

function fieldName(context: string, instancePath: string): string {
  const path = instancePath.replace(/^\//, '').replace(/\//g, '.');
  return path ? `${context}.${path}` : context;
}

/** Fastify's client errors in our words and codes (its own codes name the framework, not the problem). */
const CLIENT_ERRORS: Record<string, { message: string; code: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { message: 'Request body is too large', code: 'BODY_TOO_LARGE' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { message: 'Unsupported content type', code: 'UNSUPPORTED_MEDIA_TYPE' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { message: 'Body cannot be empty when content-type is application/json', code: 'EMPTY_JSON_BODY' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { message: 'The Content-Length does not match the body', code: 'INVALID_CONTENT_LENGTH' },
};

/** A client error of Fastify's (or a plugin's) as the failure body says it: known ones renamed, the rest INVALID_REQUEST. */
function clientFailure(error: FastifyError): { message: string; code: string } {
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  if (known) return known;
  // Our own codes (parsers and plugins set them: INVALID_JSON, INVALID_MULTIPART) stay as they are.
  if (error.code && !error.code.startsWith('FST_')) return { message: error.message, code: error.code };
  return { message: error.message, code: 'INVALID_REQUEST' };
}
