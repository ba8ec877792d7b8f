import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { checkBody } from '../core/schema-check.js';
import { updateCardDetails } from './repository.js';
import { CardChanges, CardMsg, isExpired, TokenizeCard } from './validation.js';
import { type CardRecord, findCard, storeCard, toCardRecord } from './vault.js';

const expiryOf = (card: Record<string, unknown>) => ({
  expMonth:
    card.exp_month === undefined || card.exp_month === null || card.exp_month === ''
      ? undefined
      : Number(card.exp_month),
  expYear:
    card.exp_year === undefined || card.exp_year === null || card.exp_year === ''
      ? undefined
      : Number(card.exp_year),
});

/**
 * Tokenization: a full card (number, holder, exp_month, exp_year) is stored under a new token; a
 * `token` with any of holder, exp_month, exp_year updates that card and keeps its token (updateCard).
 * The card's schema (TokenizeCard) states every rule of its fields; a CVC sent along is checked for
 * form and then forgotten: it is never stored. Errors are reported under `prefix`, in the gateway's
 * words (the gateway is the one caller).
 */
export async function tokenizeCard(
  ctx: Ctx,
  body: Record<string, unknown>,
  prefix: string[] = [],
): Promise<CardRecord> {
  const errors = new ErrorCollector();
  if (!checkBody(TokenizeCard, body, errors, prefix)) errors.throwIfAny();
  if (typeof body.token === 'string' && body.token !== '') return updateCard(ctx, body.token, body, prefix);
  const now = ctx.clock.now();
  const { expMonth, expYear } = expiryOf(body) as { expMonth: number; expYear: number };
  if (isExpired(expMonth, expYear, now)) throw expired(errors, prefix);
  const row = await storeCard(
    ctx.db,
    ctx.masterKey,
    ctx.shop.id,
    {
      kind: 'number',
      number: (body.number as string).replace(/\s+/g, ''),
      holder: body.holder as string,
      expMonth,
      expYear,
      cvc: undefined,
    },
    now,
  );
  return toCardRecord(row);
}

function expired(errors: ErrorCollector, prefix: string[]): ApiError {
  errors.add([...prefix, 'base'], CardMsg.dateExpired);
  return ApiError.validation(errors.tree);
}

/**
 * New holder or expiry for the shop's card `token`, read from `body` (CardChanges); the number
 * never changes. An unknown token, or another shop's, "does not exist", reported under `prefix` as
 * the rest; a new expiry must not be past.
 */
export async function updateCard(
  ctx: Ctx,
  token: string,
  body: Record<string, unknown>,
  prefix: string[] = [],
): Promise<CardRecord> {
  const errors = new ErrorCollector();
  if (!checkBody(CardChanges, body, errors, prefix)) errors.throwIfAny();
  const now = ctx.clock.now();
  const { expMonth, expYear } = expiryOf(body);
  const holder = typeof body.holder === 'string' && body.holder !== '' ? body.holder : undefined;
  const row = await findCard(ctx.db, ctx.shop.id, token);
  if (!row) {
    errors.add([...prefix, 'token'], CardMsg.unknownToken);
    throw ApiError.validation(errors.tree);
  }
  // A new expiry must not be past; an unchanged stored one is the cardholder's business.
  if (
    (expMonth !== undefined || expYear !== undefined) &&
    isExpired(expMonth ?? row.exp_month, expYear ?? row.exp_year, now)
  )
    throw expired(errors, prefix);
  const updated = await updateCardDetails(ctx.db, ctx.shop.id, token, { holder, expMonth, expYear }, now);
  return toCardRecord(updated ?? row);
}
