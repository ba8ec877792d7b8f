import { type TSchema, Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ErrorCollector, type ErrorTree } from '../../src/core/errors.js';
import { checkBody, unwrapErrors, withRules } from '../../src/core/schema-check.js';
import { MESSAGES } from '../../src/core/schema-errors.js';
import { Nullable, OptionalText, Text, WholeNumber } from '../../src/http/schemas.js';

/** The schema → contract-message pipeline on its own: what each broken keyword reads as. */

const Thing = withRules(
  Type.Object({
    name: Text({ maxLength: 5 }),
    note: OptionalText({ maxLength: 3 }),
    amount: WholeNumber({ exclusiveMinimum: 0 }),
    count: Type.Optional(Nullable(WholeNumber({ minimum: 1, maximum: 10 }))),
    kind: Type.Optional(Nullable(Type.Enum(['a', 'b'], { type: 'string' }))),
    code: Type.Optional(
      Nullable(Type.String({ pattern: '^[A-Z]{2}$', [MESSAGES]: { pattern: 'must be two capitals' } })),
    ),
    flag: Type.Optional(Nullable(Type.Boolean())),
    inner: Type.Optional(Nullable(Type.Object({ size: WholeNumber({ minimum: 0 }) }))),
  }),
  (thing, check) => {
    if (check.passed('kind') && thing.kind === 'b' && thing.code === undefined)
      check.add('code', "can't be blank");
  },
);

function errorsOf(body: unknown, schema: TSchema = Thing, prefix: string[] = []): ErrorTree {
  const errors = new ErrorCollector();
  checkBody(schema, body, errors, prefix);
  return errors.tree;
}

const valid = { name: 'Ann', amount: 5 };

describe('schema checks in the contract words', () => {
  it('accepts a valid body and reads numeric strings as numbers', () => {
    const body: Record<string, unknown> = { ...valid, amount: ' 42 ', count: '3' };
    expect(errorsOf(body)).toEqual({});
    expect(body).toMatchObject({ amount: 42, count: 3 });
  });

  it('reads a missing, null, empty or spaces-only required field as blank', () => {
    for (const name of [undefined, null, '', '   '])
      expect(errorsOf({ ...valid, name }), String(name)).toEqual({ name: ["can't be blank"] });
    expect(errorsOf({ name: 'Ann', amount: '' })).toEqual({ amount: ["can't be blank"] });
  });

  it('reads null and "" of an optional field as absent', () => {
    expect(errorsOf({ ...valid, note: '', count: null, kind: '', code: null, flag: null })).toEqual({});
  });

  it('words each keyword as the platform does, one message per field', () => {
    expect(
      errorsOf({
        name: 'far too long',
        note: 12,
        amount: 0,
        count: 11,
        kind: 'c',
        code: 'abc',
        flag: 'yes',
      }),
    ).toEqual({
      name: ['is too long (maximum is 5 characters)'],
      note: ['must be a string'],
      amount: ['must be greater than 0'],
      count: ['must be less than or equal to 10'],
      kind: ['is not included in the list'],
      code: ['must be two capitals'],
      flag: ['must be true or false'],
    });
  });

  it('tells a fraction from a non-number, and refuses numbers beyond 2^53', () => {
    expect(errorsOf({ ...valid, amount: 1.5 })).toEqual({ amount: ['must be an integer'] });
    expect(errorsOf({ ...valid, amount: '1.5' })).toEqual({ amount: ['must be an integer'] });
    expect(errorsOf({ ...valid, amount: 'ten' })).toEqual({ amount: ['is not a number'] });
    expect(errorsOf({ ...valid, amount: true })).toEqual({ amount: ['is not a number'] });
    expect(errorsOf({ ...valid, amount: 2 ** 53 })).toEqual({ amount: ['is too large'] });
  });

  it('nests errors of nested objects, and names a non-object as such', () => {
    expect(errorsOf({ ...valid, inner: { size: -1 } })).toEqual({
      inner: { size: ['must be greater than or equal to 0'] },
    });
    expect(errorsOf({ ...valid, inner: 'x' })).toEqual({ inner: ['must be an object'] });
  });

  it('runs the rules beside the schema, on fields the schema let through, in the same answer', () => {
    expect(errorsOf({ ...valid, name: '', kind: 'b' })).toEqual({
      name: ["can't be blank"],
      code: ["can't be blank"],
    });
    expect(errorsOf({ ...valid, kind: 'x' })).toEqual({ kind: ['is not included in the list'] });
  });

  it('joins the messages in the order the fields are documented', () => {
    const errors = new ErrorCollector();
    checkBody(Thing, { flag: 1, amount: -1 }, errors);
    expect(Object.keys(errors.tree)).toEqual(['name', 'amount', 'flag']);
  });

  it('answers a body that is not an object in errors.base, or at its place when nested', () => {
    expect(errorsOf([1, 2])).toEqual({ base: ['Request body must be a JSON object'] });
    expect(errorsOf('x', Thing, ['thing'])).toEqual({ thing: ['must be an object'] });
    expect(errorsOf({ amount: 5 }, Thing, ['thing'])).toEqual({ thing: { name: ["can't be blank"] } });
  });

  it('names the members of an unwrapped object without its key', () => {
    const Wrapped = Type.Object({ request: unwrapErrors(Type.Object({ amount: WholeNumber() })) });
    expect(errorsOf({ request: {} }, Wrapped)).toEqual({ amount: ["can't be blank"] });
    expect(errorsOf({}, Wrapped)).toEqual({ request: ["can't be blank"] });
    expect(errorsOf({ request: 5 }, Wrapped)).toEqual({ request: ['must be an object'] });
  });

  it('checks a field against a schema that a rule applies only when another field says so', () => {
    const Cycles = WholeNumber({ minimum: 1 });
    const Plan = withRules(
      Type.Object({ infinite: Type.Optional(Type.Boolean()), cycles: Type.Optional(Type.Unknown()) }),
      (plan, check) => {
        if (plan.infinite === false) check.against('cycles', Cycles, true);
      },
    );
    expect(errorsOf({ infinite: true, cycles: 'x' }, Plan)).toEqual({});
    expect(errorsOf({ infinite: false }, Plan)).toEqual({ cycles: ["can't be blank"] });
    expect(errorsOf({ infinite: false, cycles: 0 }, Plan)).toEqual({
      cycles: ['must be greater than or equal to 1'],
    });
  });
});
