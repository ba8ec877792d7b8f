import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Bodies are validated by the verbs themselves (they are called from pages and tests too, and report
 * every broken rule at once); the body schema documents the request and types the handler. Here a
 * body only has to be a JSON object. Query strings and path parameters are checked by Ajv.
 */
export function registerValidation(app: FastifyInstance): void {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
  });
  addFormats.default(ajv);
  app.setValidatorCompiler(({ schema, httpPart }) => {
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
