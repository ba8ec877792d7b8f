import { type ErrorBody, type ErrorTree, sentence } from '../core/errors.js';

/**
 * The gateway's error body as the platform writes it, so that its clients show the same text:
 * `{"response": {message, errors}}`, where `message` is one full sentence per error, each ending
 * with a period ("Token does not exist. Reason can't be blank."). A field's sentence names the field
 * alone, not the objects around it: the platform says "Token does not exist." of `credit_card.token`.
 */

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const humanize = (field: string) => capitalize(field.replace(/_/g, ' '));

/** The text as a sentence: with its final period, unless it already ends one. */
export function asSentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function sentencesOf(tree: ErrorTree, out: string[]): string[] {
  for (const [field, value] of Object.entries(tree)) {
    if (!Array.isArray(value)) {
      sentencesOf(value, out);
      continue;
    }
    for (const msg of value)
      out.push(asSentence(field === 'base' ? capitalize(msg) : `${humanize(field)} ${msg}`));
  }
  return out;
}

/** Every error of the tree as the platform's sentences, joined. */
export function gatewayMessage(errors: ErrorTree): string {
  const sentences = sentencesOf(errors, []);
  return sentences.length > 0 ? sentences.join(' ') : 'Invalid request.';
}

/** The platform's answer to an unknown uid, word for word: clients compare the text, period-less. */
export const NOT_FOUND = 'Record not found';

/** Whether the errors say only that the record does not exist. */
export function isNotFound(errors: ErrorTree): boolean {
  const base = errors.base;
  return (
    Object.keys(errors).length === 1 && Array.isArray(base) && base.length === 1 && base[0] === NOT_FOUND
  );
}

export function gatewayErrorBody(body: ErrorBody): { response: ErrorBody } {
  // "Record not found" is the platform's text as it is, without a sentence's period.
  if (body.message === NOT_FOUND && isNotFound(body.errors)) return { response: body };
  // A message of its own (a 500's "Internal error") is kept; one joined from the errors is rewritten.
  const message =
    body.message === sentence(body.errors) ? gatewayMessage(body.errors) : asSentence(body.message);
  return { response: { message, errors: body.errors } };
}
