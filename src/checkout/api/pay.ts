import { validateCardInput } from '../../cards/validation.js';
import { type Ctx, type Services, shopCtx } from '../../context.js';
import { ApiError, ErrorCollector, type ErrorTree } from '../../core/errors.js';
import { Fields, isEmail } from '../../core/rules.js';
import { PROCESSED } from '../../gateway/answer.js';
import {
  type ChargeRequest,
  GatewayTimeout,
  gatewayClient,
  type TransactionAnswer,
} from '../../gateway/client.js';
import { findShopRow, toShop } from '../../shops/repository.js';
import { CUSTOMER_FIELD_NAMES } from '../form-errors.js';
import { checkoutUrl } from '../repository.js';
import {
  type CtpOutcome,
  type CtpRow,
  claimCtp,
  findCtp,
  recordCtpOutcome,
  releaseCtp,
  settleCtp,
} from './repository.js';
import { isExpiredUnpaid } from './service.js';

/**
 * Paying a checkout of the checkout API on its hosted page: the payment or authorization goes through
 * the gateway's own verbs (so the transaction, its events and its notification_url are the gateway's),
 * a tokenization stores the card. One try at a time: a conditional UPDATE claims the checkout for the
 * try, so two posts of one form make one transaction; the second sees the first's outcome. A
 * declined card leaves the checkout open for another try until `attempts` declines are used up.
 */

/** How long a try may hold the checkout; a try that dies leaves it usable again afterwards. */
const TRY_LEASE_MS = 2 * 60 * 1000;

export interface CtpCheckout {
  ctx: Ctx;
  row: CtpRow;
}

export async function loadCtpCheckout(services: Services, token: string): Promise<CtpCheckout | undefined> {
  const row = await findCtp(services.db, token);
  if (!row) return undefined;
  const shopRow = await findShopRow(services.db, row.shop_id);
  if (!shopRow) return undefined;
  const ctx = shopCtx(services, toShop(shopRow));
  return { ctx, row: await settleIncomplete(ctx, row) };
}

function outcomeOf(answer: TransactionAnswer): CtpOutcome {
  const status = answer.status === 'pending' ? 'incomplete' : answer.status;
  return {
    status: status as CtpOutcome['status'],
    message: answer.message,
    gatewayResponse: { transaction: answer as unknown as Record<string, unknown> },
    uid: answer.uid,
    failed: status === 'failed' || status === 'error',
    finished: status === 'successful',
  };
}

/** Back from 3-D Secure (or after a lost answer): the gateway tells how the transaction ended. */
async function settleIncomplete(ctx: Ctx, row: CtpRow): Promise<CtpRow> {
  if (row.status !== 'incomplete' || !row.transaction_uid) return row;
  const answer = await gatewayClient(ctx).query(row.transaction_uid);
  if (!answer || answer.status === 'incomplete' || answer.status === 'pending') return row;
  const settled = await ctx.db.tx((tx) => settleCtp(tx, row.token, outcomeOf(answer), ctx.clock.now()));
  return settled ?? (await findCtp(ctx.db, row.token)) ?? row;
}

export type CtpPayOutcome =
  | { kind: 'invalid'; errors: ErrorTree }
  | { kind: 'redirect'; url: string }
  | { kind: 'done' }
  /** Another post of the form is paying right now. */
  | { kind: 'busy' };

/** The buyer's details as the page posts them: visible fields from the form, read-only ones as given. */
export function customerOf(row: CtpRow, posted: Record<string, unknown>, errors: ErrorCollector) {
  const given = row.customer ?? {};
  const { visible, read_only } = row.settings.customer_fields;
  const out: Record<string, string> = { ...given };
  const f = new Fields(posted, errors, ['customer']);
  for (const name of visible) {
    if (read_only.includes(name)) continue;
    const v = f.string(name, { required: true, max: name === 'email' ? 254 : 255 });
    if (v !== undefined) out[name] = v.trim();
  }
  if (visible.includes('email') && out.email !== undefined) f.check('email', isEmail(out.email));
  return out;
}

function chargeRequest(
  c: CtpCheckout,
  card: Record<string, unknown>,
  customer: Record<string, string>,
  ip: string,
) {
  const { row } = c;
  const address: Record<string, string> = {};
  for (const name of CUSTOMER_FIELD_NAMES)
    if (name !== 'email' && name !== 'birth_date' && customer[name]) address[name] = customer[name] as string;
  const request: ChargeRequest = {
    amount: row.order.amount,
    currency: row.order.currency,
    description: row.order.description,
    ...(row.order.tracking_id ? { tracking_id: row.order.tracking_id } : {}),
    language: row.settings.language,
    return_url: checkoutUrl(c.ctx.config.checkoutUrl, row.token),
    ...(row.settings.notification_url ? { notification_url: row.settings.notification_url } : {}),
    test: row.test,
    // The claim already makes a second charge of one try impossible; a buyer trying the same card
    // again after a decline must not be refused as a duplicate.
    duplicate_check: false,
    credit_card: card,
    customer: { ip: customer.ip ?? ip, ...(customer.email ? { email: customer.email } : {}) },
    ...(Object.keys(address).length > 0 ? { billing_address: address } : {}),
    additional_data: { ...row.order.additional_data, checkout_token: row.token },
  };
  return request;
}

async function tryOnce(
  c: CtpCheckout,
  card: Record<string, unknown>,
  customer: Record<string, string>,
  ip: string,
) {
  const gateway = gatewayClient(c.ctx);
  if (c.row.transaction_type === 'tokenization') {
    const { verification_value: _cvc, ...fields } = card;
    const record = await gateway.tokenize(fields);
    const outcome: CtpOutcome = {
      status: 'successful',
      message: PROCESSED,
      gatewayResponse: {
        transaction: { type: 'tokenization', status: 'successful', message: PROCESSED, credit_card: record },
      },
      uid: null,
      failed: false,
      finished: true,
    };
    return outcome;
  }
  const request = chargeRequest(c, card, customer, ip);
  const answer =
    c.row.transaction_type === 'authorization'
      ? await gateway.authorization(request)
      : await gateway.payment(request);
  return outcomeOf(answer);
}

export async function payCtpCheckout(
  c: CtpCheckout,
  form: { card: Record<string, unknown>; customer: Record<string, unknown>; ip: string },
): Promise<CtpPayOutcome> {
  const { ctx } = c;
  const now = ctx.clock.now();
  if (c.row.finished_at || isExpiredUnpaid(c.row, now) || c.row.status === 'incomplete')
    return { kind: 'done' };
  const errors = new ErrorCollector();
  const customer = customerOf(c.row, form.customer, errors);
  const card = validateCardInput(form.card, errors, ['credit_card'], {
    now,
    requireCvc: c.row.transaction_type !== 'tokenization',
  });
  if (!errors.empty || !card) return { kind: 'invalid', errors: errors.tree };

  const claimed = await claimCtp(ctx.db, c.row.token, now, new Date(now.getTime() + TRY_LEASE_MS));
  if (!claimed) return { kind: 'busy' };
  const claimedCheckout = { ctx, row: claimed };
  let outcome: CtpOutcome;
  try {
    outcome = await tryOnce(claimedCheckout, form.card, customer, form.ip);
  } catch (err) {
    if (err instanceof GatewayTimeout) {
      // The money may have moved: the claim stays until its lease ends, and the page asks the gateway.
      if (err.uid) {
        await recordCtpOutcome(
          ctx.db,
          c.row.token,
          {
            status: 'incomplete',
            message: null,
            gatewayResponse: { transaction: { uid: err.uid, status: 'pending' } },
            uid: err.uid,
            failed: false,
            finished: false,
          },
          ctx.clock.now(),
        );
      }
      return { kind: 'done' };
    }
    await releaseCtp(ctx.db, c.row.token);
    if (err instanceof ApiError && err.code === 'validation') return { kind: 'invalid', errors: err.errors };
    throw err;
  }
  const row = await recordCtpOutcome(ctx.db, c.row.token, outcome, ctx.clock.now());
  const redirect = row.gateway_response?.transaction.redirect_url;
  if (row.status === 'incomplete' && typeof redirect === 'string') return { kind: 'redirect', url: redirect };
  return { kind: 'done' };
}
