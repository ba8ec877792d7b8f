import type { ErrorObject } from 'ajv';
import { Msg } from './rules.js';

/**
 * Ajv's errors in the platform's words, one message per field (as the hand-written rules gave):
 * the schema states the rule, this file states how a broken rule reads.
 *
 * - `required`, and any broken rule of a required field whose value is blank (null, or "" for text
 *   and amounts, or spaces only for text) → "can't be blank". A blank optional field counts as absent: its errors are dropped.
 * - A field schema may carry its own text per keyword: `'x-messages': { pattern: 'must be two letters' }`.
 * - Otherwise each keyword has its default text (DEFAULTS); `type` names the expected type.
 * - A union (`anyOf`) that fails in one branch only, once `null` is set aside, reads as that branch;
 *   so does one whose branches differ by type, in the branch of the value's type (a too long text);
 *   a union of constants reads "is not included in the list"; any other failed union "is invalid".
 */

/** Where a field sits in its schema: what the mapper needs to word a broken rule. */
export interface FieldInfo {
  schema: Record<string, unknown>;
  required: boolean;
  /** Position in the schema, so messages come in the order the fields are documented. */
  order: number;
}

export interface FieldMessage {
  path: string[];
  message: string;
  order: number;
}

/** Custom texts a field schema carries, per keyword. */
export const MESSAGES = 'x-messages';

/**
 * A field whose null or "" is a value to check, not an absence (a change of a setting: null there
 * is a request to clear it, or a mistake, never "unchanged").
 */
export const BLANK_IS_VALUE = 'x-blank-is-value';

/** A text or an integer field given as a numeric string: both take "" as blank. */
export const NUMERIC_STRING = 'x-numeric-string';

const TYPE_TEXT: Record<string, string> = {
  string: Msg.notString,
  number: Msg.notNumber,
  boolean: Msg.notBoolean,
  object: Msg.notObject,
  array: Msg.notArray,
};

/** Lower wins when a field breaks several rules: the order the hand-written checks ran in. */
const PRIORITY: Record<string, number> = {
  required: 0,
  type: 0,
  minLength: 1,
  minItems: 1,
  maxLength: 2,
  maxItems: 2,
  maximum: 3,
  exclusiveMinimum: 4,
  minimum: 4,
  exclusiveMaximum: 4,
  pattern: 5,
  format: 6,
  enum: 7,
  const: 7,
  anyOf: 8,
};

function defaultText(e: ErrorObject): string {
  const limit = Number(e.params.limit);
  switch (e.keyword) {
    case 'required':
      return Msg.blank;
    case 'type':
      if (e.params.type === 'integer') return typeof e.data === 'number' ? Msg.notInteger : Msg.notNumber;
      return TYPE_TEXT[String(e.params.type)] ?? Msg.invalid;
    case 'minLength':
      return limit <= 1 ? Msg.blank : `is too short (minimum is ${limit} characters)`;
    case 'maxLength':
      return Msg.tooLong(limit);
    case 'minItems':
      return limit <= 1 ? Msg.blank : `is too short (minimum is ${limit} items)`;
    case 'maxItems':
      return `is too long (maximum is ${limit} items)`;
    case 'minimum':
      return Msg.greaterOrEqual(limit);
    case 'exclusiveMinimum':
      return Msg.greaterThan(limit);
    case 'maximum':
      return `must be less than or equal to ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'enum':
    case 'const':
      return Msg.notIncluded;
    default:
      return Msg.invalid;
  }
}

/** Array positions point at the array field itself: errors.visible_fields, not errors.visible_fields.0 */
export function fieldPath(instancePath: string): string[] {
  return instancePath
    .split('/')
    .slice(1)
    .filter((p) => !/^\d+$/.test(p))
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const isConstant = (e: ErrorObject) => e.keyword === 'const' || e.keyword === 'enum';

/**
 * Replaces each failed union by what its failing branches say (see the file comment). Ajv lists a
 * union's branch errors before the union's own error, under the union's schema path.
 */
function resolveUnions(errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const unions = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const union of unions) {
    if (dropped.has(union)) continue;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors) {
      if (e === union || dropped.has(e) || !e.schemaPath.startsWith(`${union.schemaPath}/`)) continue;
      const branch = e.schemaPath.slice(union.schemaPath.length + 1).split('/')[0] as string;
      const options = union.schema as Record<string, unknown>[];
      if (options[Number(branch)]?.type === 'null') {
        dropped.add(e);
        continue;
      }
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    let failing = [...branches.values()];
    // Of branches of different types, the one of the value's type says what is wrong with it.
    const ofItsType = failing.filter(
      (list) => !list.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath),
    );
    if (failing.length > 1 && ofItsType.length === 1) {
      for (const list of failing) if (list !== ofItsType[0]) for (const e of list) dropped.add(e);
      failing = ofItsType;
    }
    if (failing.length === 1) {
      dropped.add(union);
      continue;
    }
    for (const list of failing) for (const e of list) dropped.add(e);
    if (failing.length > 0 && failing.every((list) => list.every(isConstant)))
      Object.assign(union, { keyword: 'enum' });
  }
  return errors.filter((e) => !dropped.has(e));
}

function valueAt(body: unknown, path: string[]): unknown {
  let v: unknown = body;
  for (const key of path)
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

function takesText(schema: Record<string, unknown> | undefined): boolean {
  if (!schema) return false;
  if (schema.type === 'string' || schema[NUMERIC_STRING] === true) return true;
  return Array.isArray(schema.anyOf) && schema.anyOf.some((s) => takesText(s as Record<string, unknown>));
}

/** Null, or "" where the field takes text: the platform's blank, which an optional field may be. */
export function isBlank(value: unknown, schema: Record<string, unknown> | undefined): boolean {
  return value === undefined || value === null || (value === '' && takesText(schema));
}

/** Blank for this field: a required text field of spaces only is blank too. */
function blankHere(value: unknown, info: FieldInfo | undefined): boolean {
  if (isBlank(value, info?.schema)) return true;
  return (
    info?.required === true && typeof value === 'string' && value.trim() === '' && takesText(info.schema)
  );
}

/**
 * One message per field, for the errors of a body checked against a schema whose fields are
 * described by `fields` (keyed by the field path joined with '/').
 */
export function fieldMessages(
  raw: ErrorObject[],
  body: unknown,
  fields: Map<string, FieldInfo>,
): FieldMessage[] {
  const chosen = new Map<string, { rank: number; message: FieldMessage }>();
  for (const e of resolveUnions(raw)) {
    // A choice's shape (schema-check.ts: choice) says what broke; its `if` adds nothing.
    if (e.keyword === 'if') continue;
    const path = fieldPath(e.instancePath);
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    const key = path.join('/');
    const info = fields.get(key);
    let message: string;
    if (e.keyword === 'required') message = Msg.blank;
    else if (
      path.length > 0 &&
      info?.schema[BLANK_IS_VALUE] !== true &&
      blankHere(valueAt(body, path), info)
    ) {
      if (!info?.required) continue;
      message = Msg.blank;
    } else {
      const own = (e.parentSchema?.[MESSAGES] ?? info?.schema[MESSAGES]) as
        | Record<string, string>
        | undefined;
      message = own?.[e.keyword] ?? defaultText(e);
    }
    const rank = e.keyword === 'required' || message === Msg.blank ? -1 : (PRIORITY[e.keyword] ?? 9);
    const seen = chosen.get(key);
    if (!seen || rank < seen.rank)
      chosen.set(key, { rank, message: { path, message, order: info?.order ?? Number.MAX_SAFE_INTEGER } });
  }
  return [...chosen.values()].map((c) => c.message).sort((a, b) => a.order - b.order);
}
