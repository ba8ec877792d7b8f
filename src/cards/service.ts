import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { updateCardDetails } from './repository.js';
import { CardFields, CardMsg } from './validation.js';
import { type CardRecord, findCard, storeCard, toCardRecord } from './vault.js';

/**
 * Tokenization: a full card (number, holder, exp_month, exp_year) is stored under a new token; a
 * `token` with any of holder, exp_month, exp_year updates that card and keeps its token (updateCard).
 * A CVC sent along is checked for form and then forgotten: it is never stored. Errors are reported
 * under `prefix`, in the gateway's words (the gateway is the one caller).
 */
export async function tokenizeCard(
  ctx: Ctx,
  body: Record<string, unknown>,
  prefix: string[] = [],
): Promise<CardRecord> {
  const errors = new ErrorCollector();
  const c = new CardFields(body, errors, prefix);
  const now = ctx.clock.now();
  const token = c.token();
  if (token !== undefined) return updateCard(ctx, token, body, prefix);
  c.cvc(false);
  const number = c.number();
  const holder = c.holder(true);
  const expMonth = c.expMonth(true);
  const expYear = c.expYear(true);
  if (expMonth !== undefined && expYear !== undefined)
    c.checkNotExpired(expMonth, expYear, now, CardMsg.dateExpired);
  errors.throwIfAny();
  const row = await storeCard(
    ctx.db,
    ctx.masterKey,
    ctx.shop.id,
    {
      kind: 'number',
      number: number as string,
      holder: holder as string,
      expMonth: expMonth as number,
      expYear: expYear as number,
      cvc: undefined,
    },
    now,
  );
  return toCardRecord(row);
}

/**
 * New holder or expiry for the shop's card `token`, read from `body` as tokenization reads them; the
 * number never changes, and a CVC sent along is checked for form and forgotten. An unknown token, or
 * another shop's, "does not exist", reported under `prefix` as the rest.
 */
export async function updateCard(
  ctx: Ctx,
  token: string,
  body: Record<string, unknown>,
  prefix: string[] = [],
): Promise<CardRecord> {
  const errors = new ErrorCollector();
  const c = new CardFields(body, errors, prefix);
  const now = ctx.clock.now();
  c.cvc(false);
  const holder = c.holder(false);
  const expMonth = c.expMonth(false);
  const expYear = c.expYear(false);
  errors.throwIfAny();
  const row = await findCard(ctx.db, ctx.shop.id, token);
  if (!row) {
    errors.add([...prefix, 'token'], CardMsg.unknownToken);
    throw ApiError.validation(errors.tree);
  }
  // A new expiry must not be past; an unchanged stored one is the cardholder's business.
  if (expMonth !== undefined || expYear !== undefined) {
    c.checkNotExpired(expMonth ?? row.exp_month, expYear ?? row.exp_year, now, CardMsg.dateExpired);
    errors.throwIfAny();
  }
  const updated = await updateCardDetails(ctx.db, ctx.shop.id, token, { holder, expMonth, expYear }, now);
  return toCardRecord(updated ?? row);
}
