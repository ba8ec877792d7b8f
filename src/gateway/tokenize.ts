import { tokenizeCard } from '../cards/service.js';
import type { CardRecord } from '../cards/vault.js';
import type { Ctx } from '../context.js';
import { requestOf } from './input.js';

/**
 * `POST /credit_cards`. The platform's clients send the card fields flat in `request`
 * (`{"request": {"number", "holder", "exp_month", "exp_year", "token"}}`); a `credit_card` object inside
 * `request` is accepted too, and errors are then reported under `credit_card`. The answer is the card
 * record itself, not wrapped, as the platform answers this endpoint.
 */
export function tokenize(ctx: Ctx, body: unknown): Promise<CardRecord> {
  const request = requestOf(body);
  const nested = request.credit_card;
  if (nested !== null && typeof nested === 'object' && !Array.isArray(nested))
    return tokenizeCard(ctx, nested as Record<string, unknown>, ['credit_card']);
  return tokenizeCard(ctx, request);
}
