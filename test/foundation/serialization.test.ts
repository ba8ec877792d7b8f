import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { sharedSerializers } from '../../src/http/serialization.js';

/**
 * Response serializers are compiled once per process and shared by every app built in it (the tests
 * build dozens): the same schema object gives the same function, which writes what the schema says.
 */

const route = (schema: unknown) => ({ method: 'GET', url: '/things', httpStatus: '200', schema });

describe('shared response serializers', () => {
  const Thing = Type.Object({ id: Type.String(), amount: Type.Integer() });

  it('compiles a schema once for every app of the process, and serializes by it', () => {
    const first = sharedSerializers()({}, undefined)(route(Thing));
    const second = sharedSerializers()({}, undefined)(route(Thing));
    expect(second).toBe(first);
    // Only what the schema names is written.
    expect(JSON.parse(first({ id: 'a', amount: 5, secret: 'x' }))).toEqual({ id: 'a', amount: 5 });
  });

  it('compiles another schema object of the same shape on its own', () => {
    const same = Type.Object({ id: Type.String(), amount: Type.Integer() });
    const compile = sharedSerializers()({}, undefined);
    expect(compile(route(same))).not.toBe(compile(route(Thing)));
  });

  it('leaves an app with shared schemas or serializer options to compile its own', () => {
    const Shared = Type.Object({ id: Type.String() }, { $id: 'SharedThing' });
    const withSchemas = sharedSerializers()({ SharedThing: Shared }, undefined);
    expect(withSchemas(route(Thing))).not.toBe(withSchemas(route(Thing)));
    const withOptions = sharedSerializers()({}, { rounding: 'floor' });
    expect(withOptions(route(Thing))).not.toBe(withOptions(route(Thing)));
    expect(withOptions(route(Thing))({ id: 'b', amount: 2.7 })).toBe('{"id":"b","amount":2}');
  });
});
