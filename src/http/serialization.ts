import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serializer = (doc: unknown) => string;
type SerializerFactory = ReturnType<typeof SerializerSelector>;

// By the response schema object: what fast-json-stringify makes of a schema depends on nothing else
// when the app has no shared schemas nor serializer options.
const compiled = new WeakMap<object, Serializer>();

const isEmpty = (value: unknown) =>
  value == null || (typeof value === 'object' && Object.keys(value).length === 0);

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled once per process: a route's
 * schema is a module's constant, so every app built in the process (the tests build dozens, a Kopek
 * process one) takes the serializer the first compiled, instead of generating and compiling its code
 * again (about half the cost of building an app). An app with shared schemas (`addSchema`) or
 * serializer options compiles its own, as Fastify would.
 */
export function sharedSerializers(): SerializerFactory {
  const selector = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = selector(externalSchemas, options);
    if (!isEmpty(externalSchemas) || !isEmpty(options)) return compile;
    return (route) => {
      const { schema } = route;
      if (typeof schema !== 'object' || schema === null) return compile(route);
      let serialize = compiled.get(schema);
      if (!serialize) {
        serialize = compile(route);
        compiled.set(schema, serialize);
      }
      return serialize;
    };
  };
}
