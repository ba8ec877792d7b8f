import { Type } from 'typebox';
import { LANGUAGES, Msg } from '../core/rules.js';
import { MESSAGES, NUMERIC_STRING } from '../core/schema-errors.js';

/** The contract's error body, for the OpenAPI document. */
export const ErrorBodySchema = Type.Object(
  {
    message: Type.String(),
    errors: Type.Record(Type.String(), Type.Unknown()),
  },
  {
    $id: 'ErrorBody',
    description: 'message joins every error into one sentence; errors maps fields (or base) to messages',
  },
);

export const errorResponses = {
  401: ErrorBodySchema,
  404: ErrorBodySchema,
  422: ErrorBodySchema,
  /** The shop's requests passed its rate limit (http/rate-limit.ts); with Retry-After. */
  429: ErrorBodySchema,
} as const;

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

/** Free-form object kept as given (additional_data and friends). */
export const FreeObject = Type.Record(Type.String(), Type.Unknown());

export const IdParams = Type.Object({ id: Type.String() });

/**
 * Required text: "", spaces only and null read "can't be blank" (the platform's wording). Longer than
 * maxLength reads "is too long (maximum is N characters)"; a broken format "is invalid".
 */
export const Text = (options: Parameters<typeof Type.String>[0] = {}) =>
  Type.String({
    minLength: 1,
    pattern: '\\S',
    ...options,
    [MESSAGES]: { pattern: Msg.blank, ...((options as Record<string, unknown>)[MESSAGES] ?? {}) },
  });

/** Optional text; null and "" count as absent. */
export const OptionalText = (options: Parameters<typeof Type.String>[0] = {}) =>
  Type.Optional(Nullable(Type.String(options)));

/**
 * An amount or count: a whole number, also given as a numeric string ("100"), which is read as the
 * number. Fractions read "must be an integer", beyond 2^53 "is too large".
 */
export const WholeNumber = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({
    maximum: Number.MAX_SAFE_INTEGER,
    ...options,
    [NUMERIC_STRING]: true,
    // Beyond 2^53 a number is no longer exact; a maximum of the field's own reads as any maximum.
    ...(options.maximum === undefined ? { [MESSAGES]: { maximum: 'is too large' } } : {}),
  });

/**
 * A tracking_id as requests give it: text, or an integer number (PHP shops send their order id so),
 * which is kept as its decimal text (decisions.md). Answers always carry the text.
 */
export const TrackingId = Type.Union(
  [
    Type.String({ maxLength: 255 }),
    Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
  ],
  {
    description:
      "The shop's own id of the order, at most 255 characters; an integer is kept as its decimal text",
    // A fraction, or an integer beyond 2^53 (no longer exact), is no id: it is read as any other type.
    [MESSAGES]: { anyOf: Msg.notString, minimum: Msg.notString, maximum: Msg.notString },
  },
);

/** An absolute http(s) URL, as where to send the buyer or a notification. */
export const HttpUrl = (options: Parameters<typeof Type.String>[0] = {}) =>
  Type.String({
    maxLength: 2048,
    format: 'http-url',
    ...options,
    [MESSAGES]: { format: 'must be an absolute http(s) URL' },
  });

/** One of the languages of the payment pages and e-mails. */
export const Language = (options: Parameters<typeof Type.String>[0] = {}) =>
  Type.Enum(LANGUAGES, { type: 'string', default: 'en', ...options });
