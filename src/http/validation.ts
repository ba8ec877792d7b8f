import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { checkBody, isEnforced, prepare } from '../core/schema-check.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The answer to a path parameter that holds text no stored object can have, as the route answers
     * any malformed id: 404 "Record not found" unless the route says otherwise.
     */
    malformedParam?: () => ApiError;
  }
}

/**
 * PostgreSQL cannot store U+0000 in text or jsonb, and jsonb refuses an unpaired surrogate (which
 * JSON allows as an escape): such a value would fail at INSERT as a 500. It is the client's mistake.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what has to be found
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * No API body nests anywhere near this deep; beyond it, JSON.stringify (idempotency fingerprints,
 * jsonb columns) would overflow the stack and answer 500.
 */
const MAX_DEPTH = 64;

interface Visit {
  value: unknown;
  key: string | undefined;
  parent: Visit | undefined;
  depth: number;
}

function pathTo(visit: Visit): string[] {
  const path: string[] = [];
  for (let v: Visit | undefined = visit; v; v = v.parent) if (v.key !== undefined) path.unshift(v.key);
  return path;
}

/**
 * Every string of the body, keys included, and its depth. A loop with parent links rather than
 * recursion or copied paths, so even a deeply nested body costs linear time.
 */
function unstorableText(body: object): ErrorCollector {
  const errors = new ErrorCollector();
  const stack: Visit[] = [{ value: body, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value } = visit;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) {
        const path = pathTo(visit);
        if (path.length > 0) errors.add(path, 'contains invalid characters');
        else errors.add('base', 'Request body contains invalid characters');
      }
    } else if (typeof value === 'object' && value !== null && visit.depth >= MAX_DEPTH) {
      errors.add('base', `Request body is nested too deeply (more than ${MAX_DEPTH} levels)`);
    } else if (Array.isArray(value)) {
      // Array positions point at the array field itself, as in the other validation errors.
      for (const item of value)
        stack.push({ value: item, key: undefined, parent: visit, depth: visit.depth + 1 });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (UNSTORABLE.test(key))
          errors.add('base', 'Request body contains a field name with invalid characters');
        else stack.push({ value: item, key, parent: visit, depth: visit.depth + 1 });
      }
    }
  }
  return errors;
}

/**
 * Path parameters and query values reach SQL as text too. An id the store cannot hold names nothing,
 * so the route answers as for any malformed id; a query value is named like a body field.
 */
function checkUrlText(request: FastifyRequest): void {
  const params = request.params as Record<string, string> | undefined;
  for (const value of Object.values(params ?? {})) {
    if (UNSTORABLE.test(value)) throw request.routeOptions.config?.malformedParam?.() ?? ApiError.notFound();
  }
  const errors = new ErrorCollector();
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (UNSTORABLE.test(name))
      errors.add('base', 'Query string contains a parameter name with invalid characters');
    else if (
      (Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && UNSTORABLE.test(v))
    )
      errors.add(name, 'contains invalid characters');
  }
  errors.throwIfAny();
}

/**
 * The Ajv of query strings and path parameters, one per process: Ajv keeps each schema it compiled,
 * by the schema object, so every app built in a process (the tests build dozens, one Kopek process
 * one) shares the validators of the routes' schemas instead of compiling them again.
 */
let sharedAjv: Ajv | undefined;
function urlAjv(): Ajv {
  if (!sharedAjv) {
    sharedAjv = new Ajv({
      allErrors: true,
      coerceTypes: false,
      removeAdditional: false,
      useDefaults: true,
      strict: false,
    });
    addFormats.default(sharedAjv);
  }
  return sharedAjv;
}

/**
 * A body schema marked `enforced` is the route's validator: core/schema-check.ts compiles it once
 * and answers every broken rule in the contract's words. A route whose schema is not marked yet only
 * documents its body, which its verb validates; there the body only has to be a JSON object. Every
 * body's text must be storable (unstorableText). Query strings and path parameters are checked by
 * Ajv, after their text (checkUrlText).
 */
export function registerValidation(app: FastifyInstance): void {
  const ajv = urlAjv();
  app.addHook('preValidation', async (request) => {
    checkUrlText(request);
    if (typeof request.body === 'object' && request.body !== null) unstorableText(request.body).throwIfAny();
  });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body' && isEnforced(schema)) {
      prepare(schema);
      return (body: unknown) => {
        const errors = new ErrorCollector();
        return checkBody(schema, body, errors)
          ? { value: body }
          : { error: ApiError.validation(errors.tree) };
      };
    }
    if (httpPart === 'body') {
      return (body: unknown) => {
        if (typeof body === 'object' && body !== null && !Array.isArray(body)) return { value: body };
        const error = Object.assign(new Error('body must be object'), {
          validation: [
            { instancePath: '', keyword: 'type', params: { type: 'object' }, message: 'must be object' },
          ],
          validationContext: 'body',
        });
        return { error };
      };
    }
    return ajv.compile(schema);
  });
}
