import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody, ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}

const TYPE_MESSAGES: Record<string, string> = {
  string: Msg.notString,
  integer: Msg.notInteger,
  number: Msg.notNumber,
  boolean: Msg.notBoolean,
  object: Msg.notObject,
  array: Msg.notArray,
};

function pathOf(instancePath: string): string[] {
  // Array positions point at the array field itself: errors.visible_fields, not errors.visible_fields.0
  return instancePath
    .split('/')
    .slice(1)
    .filter((p) => !/^\d+$/.test(p))
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Ajv's errors in the contract's words: `{"errors":{"ip":["can't be blank"]}}`. */
export function validationToApiError(validation: AjvError[], context: string | undefined): ApiError {
  const collected = new ErrorCollector();
  const unions = new Set(
    validation.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath),
  );
  for (const e of validation) {
    let path = pathOf(e.instancePath);
    let msg: string;
    if (unions.has(e.instancePath) && e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    switch (e.keyword) {
      case 'required':
        path = [...path, String(e.params.missingProperty)];
        msg = Msg.blank;
        break;
      case 'type':
        msg = TYPE_MESSAGES[String(e.params.type)] ?? Msg.invalid;
        break;
      case 'maxLength':
        msg = Msg.tooLong(Number(e.params.limit));
        break;
      case 'minLength':
        msg = Msg.blank;
        break;
      case 'enum':
      case 'const':
        msg = Msg.notIncluded;
        break;
      case 'minimum':
        msg = Msg.greaterOrEqual(Number(e.params.limit));
        break;
      case 'exclusiveMinimum':
        msg = Msg.greaterThan(Number(e.params.limit));
        break;
      case 'maximum':
        msg = `must be less than or equal to ${e.params.limit}`;
        break;
      case 'maxItems':
        msg = `is too long (maximum is ${e.params.limit} items)`;
        break;
      default:
        msg = Msg.invalid;
    }
    if (path.length === 0) {
      collected.add(
        'base',
        context === 'body' ? 'Request body must be a JSON object' : `Invalid ${context ?? 'request'}`,
      );
    } else {
      collected.add(path, msg);
    }
  }
  return ApiError.validation(collected.tree);
}

/** Fastify's own errors (parsing, limits, content type) in the contract's shape, never HTML. */
function frameworkError(err: FastifyError): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ApiError.base('unsupported_media_type', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ApiError.base('payload_too_large', 'Request body is too large');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ApiError.base('bad_request', 'Request body is empty but Content-Type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ApiError.base('bad_request', 'Request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ApiError.base('bad_request', 'Content-Length does not match the body');
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON') {
    return ApiError.base('bad_request', 'Request body is not valid JSON');
  }
  const status = err.statusCode ?? 500;
  if (status === 413) return ApiError.base('payload_too_large', 'Request body is too large');
  if (status === 415) return ApiError.base('unsupported_media_type', 'Content-Type must be application/json');
  if (status >= 400 && status < 500) return ApiError.base('bad_request', err.message);
  return undefined;
}

/** How an error body is wrapped: the gateway's routes answer `{"response": {...}}`. */
export type ErrorEnvelope = (body: ErrorBody) => unknown;

declare module 'fastify' {
  interface FastifyContextConfig {
    errorEnvelope?: ErrorEnvelope;
  }
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const wrap = request.routeOptions.config?.errorEnvelope;
  if (err.code === 'unauthorized') reply.header('www-authenticate', 'Basic realm="Kopek"');
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(wrap ? wrap(err.toBody()) : err.toBody());
}

/**
 * Errors Fastify meets before it has chosen a route, so the error handler never sees them: a path
 * that does not percent-decode to UTF-8, or a path parameter longer than the router takes (100
 * characters). No route means no onRequest hook either, hence the request id here.
 */
export function answerUnroutable(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  let answer: ApiError;
  if (error.code === 'FST_ERR_BAD_URL')
    answer = ApiError.base('bad_request', 'Request path is not valid percent-encoded UTF-8');
  else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    answer = ApiError.base('uri_too_long', 'A path segment of the request is too long');
  else {
    request.log.error({ err: error }, 'unroutable request');
    answer = new ApiError(
      'internal',
      { base: [`Internal error; quote request id ${request.id} to support`] },
      'Internal error',
    );
  }
  sendApiError(request, reply, answer);
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) return sendApiError(request, reply, error);
    if (error.validation) {
      return sendApiError(
        request,
        reply,
        validationToApiError(error.validation as AjvError[], error.validationContext),
      );
    }
    const mapped = frameworkError(error);
    if (mapped) return sendApiError(request, reply, mapped);
    request.log.error({ err: error }, 'unhandled error');
    return sendApiError(
      request,
      reply,
      new ApiError(
        'internal',
        { base: [`Internal error; quote request id ${request.id} to support`] },
        'Internal error',
      ),
    );
  });
}
