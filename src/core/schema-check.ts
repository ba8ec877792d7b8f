import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { type TSchema, Type } from 'typebox';
import { isCalendarDate } from '../calendar/iso-instant.js';
import { isIsoCurrency, isKnownCurrency } from '../money/currencies.js';
import { isCountryCode } from './address.js';
import type { ErrorCollector } from './errors.js';
import { isEmail, isHttpUrl, isIpAddress } from './rules.js';
import { type FieldInfo, type FieldMessage, fieldMessages, NUMERIC_STRING } from './schema-errors.js';

/**
 * A request body's schema is what checks it: Ajv compiles each body schema once (all errors at
 * once, no type coercion), schema-errors.ts words the broken rules as the platform does, and the
 * few rules a schema cannot state (one field against another) are attached to the object schema
 * they belong to with `withRules`, and run after it, on the fields the schema let through.
 *
 * The same compiled check serves the route (Fastify's validator compiler, http/validation.ts) and
 * a verb called from elsewhere (a page, or a customer inside a subscription).
 */

const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  strict: false,
  verbose: true,
});
addFormats.default(ajv);
// Kopek's own readings of the standard formats, and its own formats; the schema names them.
ajv.addFormat('email', isEmail);
ajv.addFormat('ip', isIpAddress);
ajv.addFormat('country', isCountryCode);
ajv.addFormat('http-url', isHttpUrl);
ajv.addFormat('currency', isKnownCurrency);
ajv.addFormat('iso-currency', isIsoCurrency);
ajv.addFormat('calendar-date', isCalendarDate);

/** A feature's own format (e.g. a product's expiry), registered before its schemas are compiled. */
export function addFormat(name: string, check: (value: string) => boolean): void {
  ajv.addFormat(name, check);
}

const RULES = Symbol.for('kopek.schema.rules');
const CHOICE = Symbol.for('kopek.schema.choice');
const UNWRAPPED = Symbol.for('kopek.schema.unwrapped');
const NAMED_AS = Symbol.for('kopek.schema.named-as');
const ENFORCED = Symbol.for('kopek.schema.enforced');

/** Reports what a rule found; `passed` tells whether the schema accepted a field (else skip it). */
export interface RuleCheck {
  passed(field: string): boolean;
  add(field: string | string[], message: string): void;
  /**
   * A message for the answer's top-level `errors.base`, even when the object is nested (the
   * contract's place for an unsupported plan currency), listed where `field` is documented.
   */
  addBase(message: string, field: string): void;
  /** Checks a field against a schema that applies only when the rule says so (another field decides). */
  against(field: string, schema: TSchema, required: boolean): void;
}

/** A rule over several fields of one object, run after the object's schema. */
export type SchemaRule = (value: Record<string, unknown>, check: RuleCheck) => void;

/** Attaches rules that a schema cannot state to the object schema they concern. */
export function withRules<S extends TSchema>(schema: S, ...rules: SchemaRule[]): S {
  Object.defineProperty(schema, RULES, { value: rules, enumerable: false });
  return schema;
}

/**
 * Names the errors of an object's members without the object's own key, as the platform names the
 * fields of a transaction request: `errors.amount`, not `errors.request.amount`. An error of the
 * object itself (absent, not an object) keeps its key.
 */
export function unwrapErrors<S extends TSchema>(schema: S): S {
  Object.defineProperty(schema, UNWRAPPED, { value: true, enumerable: false });
  return schema;
}

/**
 * Names the errors of an object's members under `as` rather than under the object's own path, as the
 * checkout API names its customer's fields `errors.customer.email`, not `errors.checkout.customer.email`.
 */
export function namedAs<S extends TSchema>(schema: S, as: string[]): S {
  Object.defineProperty(schema, NAMED_AS, { value: as, enumerable: false });
  return schema;
}

/** Marks a route body schema as the route's validator (routes not marked yet keep their verbs' checks). */
export function enforced<S extends TSchema>(schema: S): S {
  Object.defineProperty(schema, ENFORCED, { value: true, enumerable: false });
  return schema;
}

/**
 * One of two shapes, told apart by `when` (e.g. "has an id"): `{id}` of a stored object, or a new one
 * in full. The document shows the union; the check applies the shape `when` picks (as if/then/else),
 * so a broken member reads as that shape's rule, not as "is invalid". The rules attached inside a
 * shape run only when it is the one picked.
 */
export function choice<A extends TSchema, B extends TSchema>(
  when: Record<string, unknown>,
  then: A,
  otherwise: B,
  options: Record<string, unknown> = {},
) {
  const union = Type.Union([then, otherwise], options);
  // Enumerable, so a copy (Type.Optional) keeps it; a symbol, so neither Ajv nor the document sees it.
  Object.defineProperty(union, CHOICE, { value: when, enumerable: true });
  return union;
}

export const isEnforced = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && (schema as Record<symbol, unknown>)[ENFORCED] === true;

/** A shape of a choice applies: the choice's `when` at `path` answers `holds`. */
interface Condition {
  path: string[];
  when: ValidateFunction;
  holds: boolean;
}

interface Compiled {
  validate: ValidateFunction;
  fields: Map<string, FieldInfo>;
  numeric: string[][];
  unwrapped: string[][];
  /** Objects whose members' errors are named under another path (namedAs). */
  renamed: { path: string[]; as: string[] }[];
  /** The unwrapped objects' own schemas: a verb given only the object checks it against these. */
  inner: { path: string[]; schema: object }[];
  rules: { path: string[]; rules: SchemaRule[]; conditions: Condition[] }[];
}

type Node = Record<string | symbol, unknown>;

/** The schema as Ajv reads it: each choice as if/then/else (the document keeps the union). */
function forAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forAjv);
  if (typeof node !== 'object' || node === null) return node;
  const n = node as Node;
  const when = n[CHOICE];
  if (when) {
    const [then, otherwise] = n.anyOf as unknown[];
    const { anyOf: _, ...rest } = n as Record<string, unknown>;
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword; the object is never awaited
    return { ...rest, if: when, then: forAjv(then), else: forAjv(otherwise) };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(n)) copy[key] = forAjv(value);
  return copy;
}

/** Walks the schema's properties (through nullable unions) for what the checks need per field. */
function describe(schema: Node): Omit<Compiled, 'validate'> {
  const out: Omit<Compiled, 'validate'> = {
    fields: new Map(),
    numeric: [],
    unwrapped: [],
    renamed: [],
    inner: [],
    rules: [],
  };
  const walk = (node: Node, path: string[], required: boolean, conditions: Condition[]) => {
    const key = path.join('/');
    if (path.length > 0 && !out.fields.has(key))
      out.fields.set(key, { schema: node as Record<string, unknown>, required, order: out.fields.size });
    if (node[NUMERIC_STRING] === true) out.numeric.push(path);
    const as = node[NAMED_AS] as string[] | undefined;
    if (as) out.renamed.push({ path, as });
    if (node[UNWRAPPED] === true) {
      out.unwrapped.push(path);
      out.inner.push({ path, schema: node });
    }
    const rules = node[RULES] as SchemaRule[] | undefined;
    if (rules) out.rules.push({ path, rules, conditions });
    const when = node[CHOICE] as Record<string, unknown> | undefined;
    const branches = (node.anyOf as Node[] | undefined) ?? [];
    if (when) {
      const test = ajv.compile(when);
      branches.forEach((branch, i) => {
        walk(branch, path, required, [...conditions, { path, when: test, holds: i === 0 }]);
      });
    } else for (const branch of branches) walk(branch, path, required, conditions);
    const properties = node.properties as Record<string, Node> | undefined;
    const needed = (node.required as string[] | undefined) ?? [];
    for (const [name, child] of Object.entries(properties ?? {}))
      walk(child, [...path, name], needed.includes(name), conditions);
  };
  walk(schema, [], true, []);
  return out;
}

const compiled = new WeakMap<object, Compiled>();
/** `{field: schema}` objects for RuleCheck.against, made once per schema and field. */
const wrappers = new WeakMap<object, Map<string, TSchema>>();

function wrapper(schema: TSchema, field: string, required: boolean): TSchema {
  const key = `${required}:${field}`;
  let byField = wrappers.get(schema);
  if (!byField) {
    byField = new Map();
    wrappers.set(schema, byField);
  }
  let w = byField.get(key);
  if (!w) {
    w = Type.Object({ [field]: required ? schema : Type.Optional(schema) });
    byField.set(key, w);
  }
  return w;
}

function compile(schema: TSchema): Compiled {
  let c = compiled.get(schema);
  if (!c) {
    c = { validate: ajv.compile(forAjv(schema) as TSchema), ...describe(schema as Node) };
    compiled.set(schema, c);
  }
  return c;
}

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/**
 * Amounts may come as numeric strings ("100"): the schema marks such fields `x-numeric-string`,
 * and they are read as numbers before the check ("" as absent). Other strings stay and fail `type`.
 */
function readNumericStrings(body: unknown, paths: string[][]): void {
  for (const path of paths) {
    let parent: unknown = body;
    for (const key of path.slice(0, -1))
      parent = typeof parent === 'object' && parent !== null ? (parent as Node)[key] : undefined;
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) continue;
    const obj = parent as Record<string, unknown>;
    const name = path.at(-1) as string;
    const v = obj[name];
    if (v === '') delete obj[name];
    else if (typeof v === 'string' && NUMERIC.test(v)) obj[name] = Number(v);
  }
}

function valueAt(body: unknown, path: string[]): unknown {
  let v: unknown = body;
  for (const key of path) v = typeof v === 'object' && v !== null ? (v as Node)[key] : undefined;
  return v;
}

/** Compiles a route's body schema when the route is registered, not at its first request. */
export function prepare(schema: TSchema): void {
  compile(schema);
}

/**
 * The path an error is named by: under another path for the members of an object named so
 * (namedAs), without the keys of unwrapped objects above the field.
 */
function named(path: string[], c: Compiled): string[] {
  for (const r of c.renamed)
    if (path.length > r.path.length && r.path.every((key, i) => path[i] === key))
      return [...r.as, ...path.slice(r.path.length)];
  for (const u of c.unwrapped)
    if (path.length > u.length && u.every((key, i) => path[i] === key)) return path.slice(u.length);
  return path;
}

type Found = FieldMessage & { root?: boolean };

/**
 * Every broken rule of `body`: the schema's, then the attached rules of the objects the body has
 * (only those of the shape a choice picked), on the fields the schema let through.
 */
function problems(c: Compiled, body: unknown): Found[] {
  readNumericStrings(body, c.numeric);
  /** Field paths (joined with '/') refused so far, with every object above them. */
  const failed = new Set<string>();
  const found: Found[] = [];
  const refuse = (m: Found) => {
    found.push(m);
    for (let i = 0; i <= m.path.length; i++) failed.add(m.path.slice(0, i).join('/'));
  };
  if (!c.validate(body)) for (const m of fieldMessages(c.validate.errors ?? [], body, c.fields)) refuse(m);
  for (const { path, rules, conditions } of c.rules) {
    const value = valueAt(body, path);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    if (!conditions.every((k) => k.when(valueAt(body, k.path)) === k.holds)) continue;
    const orderOf = (at: string[]) => c.fields.get(at.join('/'))?.order ?? Number.MAX_SAFE_INTEGER;
    const holder = value as Record<string, unknown>;
    const check: RuleCheck = {
      passed: (field) => !failed.has([...path, field].join('/')),
      add: (field, message) => {
        const at = [...path, ...(Array.isArray(field) ? field : [field])];
        refuse({ path: at, message, order: orderOf(at) });
      },
      addBase: (message, field) =>
        refuse({ path: ['base'], message, order: orderOf([...path, field]), root: true }),
      against: (field, schema, required) => {
        // The field's own attached rules run too.
        for (const m of problems(compile(wrapper(schema, field, required)), holder))
          refuse(
            m.root
              ? { ...m, order: orderOf([...path, field]) }
              : { path: [...path, ...m.path], message: m.message, order: orderOf([...path, field]) },
          );
      },
    };
    for (const rule of rules) rule(holder, check);
  }
  return found;
}

/** Bodies already checked against a schema (by the route), so the verb does not check them again. */
const checked = new WeakMap<object, object>();

/**
 * Checks `body` against `schema` and its attached rules, adding every broken rule to `errors`
 * (under `prefix` when the body is nested, e.g. ['customer']). Numeric strings of amount fields are
 * replaced by numbers in `body`. Answers whether the body passed.
 */
export function checkBody(
  schema: TSchema,
  body: unknown,
  errors: ErrorCollector,
  prefix: string[] = [],
): boolean {
  if (typeof body === 'object' && body !== null && checked.get(body) === schema) return true;
  const c = compile(schema);
  const found = problems(c, body);
  // In the order the fields are documented, whichever check found them.
  for (const { path, message, root } of found.sort((a, b) => a.order - b.order)) {
    if (path.length === 0 && prefix.length === 0) errors.add('base', 'Request body must be a JSON object');
    else errors.add(root ? path : [...prefix, ...named(path, c)], message);
  }
  const ok = found.length === 0;
  if (ok && typeof body === 'object' && body !== null) {
    checked.set(body, schema);
    for (const { path, schema: own } of c.inner) {
      const value = valueAt(body, path);
      if (typeof value === 'object' && value !== null) checked.set(value, own);
    }
  }
  return ok;
}
