import { type CardRecord, tokenizeCard, updateCard } from '../cards/index.js';
import type { Ctx } from '../context.js';
import { requestOf } from './input.js';

/**
 * The platform's clients send the card fields flat in `request` (`{"request": {"number", "holder",
 * "exp_month", "exp_year", "token"}}`); a `credit_card` object inside `request` is accepted too, and
 * errors are then reported under `credit_card`. The answer is the card record itself, not wrapped, as
 * the platform answers these endpoints.
 */
function cardFieldsOf(body: unknown): { fields: Record<string, unknown>; prefix: string[] } {
  const request = requestOf(body);
  const nested = request.credit_card;
  if (nested !== null && typeof nested === 'object' && !Array.isArray(nested))
    return { fields: nested as Record<string, unknown>, prefix: ['credit_card'] };
  return { fields: request, prefix: [] };
}

/** `POST /credit_cards` (and `/v2/credit_cards`): a new token, or new holder/expiry for `token`. */
export function tokenize(ctx: Ctx, body: unknown): Promise<CardRecord> {
  const { fields, prefix } = cardFieldsOf(body);
  return tokenizeCard(ctx, fields, prefix);
}

/**
 * `POST /credit_cards/{token}` and `PUT /v2/credit_cards/{token}`: new holder or expiry for the card
 * the path names. A token in the body is not read: the path alone says which card changes.
 */
export function updateCardByToken(ctx: Ctx, token: string, body: unknown): Promise<CardRecord> {
  const { fields, prefix } = cardFieldsOf(body);
  return updateCard(ctx, token, fields, prefix);
}
