import { validateCardInput } from '../../cards/index.js';
import { checkoutGateway, type GatewayClient, sendCharge } from '../../charging/index.js';
import { type Ctx, type Services, shopCtx } from '../../context.js';
import { checkAddress } from '../../core/address.js';
import { ApiError, ErrorCollector, type ErrorTree } from '../../core/errors.js';
import { Fields, isEmail } from '../../core/rules.js';
import { dbWithin } from '../../db/held.js';
import {
  type ChargeRequest,
  GatewayTimeout,
  PROCESSED,
  type TransactionAnswer,
} from '../../gateway/index.js';
import { checkoutUrl } from '../../pages/checkout-url.js';
import { type FrameMode, withFrameMode } from '../../pages/frame-mode.js';
import { shopById } from '../../shops/index.js';
import { CUSTOMER_FIELD_NAMES } from '../form-errors.js';
import {
  type CtpOutcome,
  type CtpRow,
  claimCtp,
  findCtp,
  lockClaimedTry,
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
 *
 * Money is never taken twice, even when the process dies in the middle of a try:
 * - with the gateway in this process (the default), the claim, the payment and its outcome commit in
 *   one database transaction: a crash rolls all of it back, so nothing was charged and the buyer may
 *   simply try again;
 * - with the gateway on another server (GATEWAY_URL), the claim is committed first, numbering the try;
 *   the payment carries the try's key `{token}-{try}` (its tracking_id, unless the shop gave one, and
 *   `additional_data.checkout_try` always). A claim whose lease ran out without an outcome is resolved
 *   by asking the gateway for that key before any new try: what it finds is recorded as the try's
 *   outcome; when it finds nothing, the request never reached it (the lease outlasts the HTTP
 *   client's timeout many times over) and the buyer may try again.
 */

/** How long a try may hold the checkout before its outcome is asked of the gateway. */
const TRY_LEASE_MS = 2 * 60 * 1000;

/** The gateway of a shop's context; tests put a gateway that fails on purpose in its place. */
export type GatewayOf = (ctx: Ctx) => GatewayClient;

/** The key of try `n` of a checkout, sent with its payment: how the try is found again. */
export const tryKey = (token: string, n: number) => `${token}-${n}`;

export interface CtpCheckout {
  ctx: Ctx;
  row: CtpRow;
}

export async function loadCtpCheckout(
  services: Services,
  token: string,
  gatewayOf: GatewayOf = checkoutGateway,
): Promise<CtpCheckout | undefined> {
  const row = await findCtp(services.db, token);
  if (!row) return undefined;
  const shop = await shopById(services.db, row.shop_id);
  if (!shop) return undefined;
  const ctx = shopCtx(services, shop);
  const settled = await settleIncomplete(ctx, row, gatewayOf);
  return { ctx, row: await resolveStaleTry(ctx, settled, gatewayOf) };
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
async function settleIncomplete(ctx: Ctx, row: CtpRow, gatewayOf: GatewayOf): Promise<CtpRow> {
  if (row.status !== 'incomplete' || !row.transaction_uid) return row;
  const answer = await gatewayOf(ctx).query(row.transaction_uid);
  if (!answer || answer.status === 'incomplete' || answer.status === 'pending') return row;
  const settled = await ctx.db.tx((tx) => settleCtp(tx, row.token, outcomeOf(answer), ctx.clock.now()));
  return settled ?? (await findCtp(ctx.db, row.token)) ?? row;
}

/**
 * A try claimed and never answered (its process died, or its request's fate is unknown), once its
 * lease is over: the gateway is asked for the try's key. A transaction found is the try's outcome
 * (a pending one waits as incomplete); none means the gateway never took the try, which is then let
 * go so the buyer can try again. A tokenization moves no money: it is let go.
 */
async function resolveStaleTry(ctx: Ctx, row: CtpRow, gatewayOf: GatewayOf): Promise<CtpRow> {
  if (!row.paying_until || row.paying_until.getTime() > ctx.clock.now().getTime()) return row;
  const n = row.tries;
  let outcome: CtpOutcome | undefined;
  if (row.transaction_type !== 'tokenization') {
    const key = tryKey(row.token, n);
    const found = await gatewayOf(ctx).queryByTrackingId(row.order.tracking_id ?? key);
    const answer = found.find(
      (t) => t.type === row.transaction_type && t.additional_data?.checkout_try === key,
    );
    if (answer) outcome = outcomeOf(answer);
  }
  const resolved = await ctx.db.tx(async (tx) => {
    // Recorded meanwhile by the try itself (it was only slow): its outcome stands.
    if (!(await lockClaimedTry(tx, row.token, n))) return undefined;
    if (outcome) return recordCtpOutcome(tx, row.token, outcome, ctx.clock.now());
    await releaseCtp(tx, row.token, n);
    return undefined;
  });
  if (outcome)
    ctx.log.warn(
      { checkout: row.token, try: n, status: outcome.status },
      'a lost checkout try was found at the gateway',
    );
  else ctx.log.warn({ checkout: row.token, try: n }, 'a lost checkout try never reached the gateway; let go');
  return resolved ?? (await findCtp(ctx.db, row.token)) ?? row;
}

export type CtpPayOutcome =
  | { kind: 'invalid'; errors: ErrorTree }
  | { kind: 'redirect'; url: string }
  | { kind: 'done' }
  /** Another post of the form is paying right now, or paid the try this form was shown for. */
  | { kind: 'busy' }
  /** The gateway could not be reached and may or may not have taken the try: it is asked later. */
  | { kind: 'unavailable' };

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
  // The same address rules as the API's (core/address.ts), on what the buyer typed.
  checkAddress(f, out);
  return out;
}

function chargeRequest(
  c: CtpCheckout,
  card: Record<string, unknown>,
  customer: Record<string, string>,
  ip: string,
  frame: FrameMode | undefined,
) {
  const { row } = c;
  const address: Record<string, string> = {};
  for (const name of CUSTOMER_FIELD_NAMES)
    if (name !== 'email' && name !== 'birth_date' && customer[name]) address[name] = customer[name] as string;
  const request: ChargeRequest = {
    amount: row.order.amount,
    currency: row.order.currency,
    description: row.order.description,
    // The shop's own tracking_id when it gave one (its transactions carry it), else the try's key.
    tracking_id: row.order.tracking_id ?? tryKey(row.token, row.tries),
    language: row.settings.language,
    // Back from 3-D Secure to the page in the frame it was paid in (docs/embedding.md).
    return_url: withFrameMode(checkoutUrl(c.ctx.config.checkoutUrl, row.token), frame),
    ...(row.settings.notification_url ? { notification_url: row.settings.notification_url } : {}),
    test: row.test,
    // The claim already makes a second charge of one try impossible; a buyer trying the same card
    // again after a decline must not be refused as a duplicate.
    duplicate_check: false,
    credit_card: card,
    customer: { ip: customer.ip ?? ip, ...(customer.email ? { email: customer.email } : {}) },
    ...(Object.keys(address).length > 0 ? { billing_address: address } : {}),
    additional_data: {
      ...row.order.additional_data,
      checkout_token: row.token,
      checkout_try: tryKey(row.token, row.tries),
    },
  };
  return request;
}

async function tryOnce(
  c: CtpCheckout,
  gateway: GatewayClient,
  card: Record<string, unknown>,
  customer: Record<string, string>,
  ip: string,
  frame: FrameMode | undefined,
) {
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
  const request = chargeRequest(c, card, customer, ip, frame);
  // Through charging, with the try's gateway key: an answer is the try's outcome; a refusal and a
  // send without answer end as they always did here (the callers' catches decide what follows).
  const sent = await sendCharge(c.ctx, request, {
    owner: { checkout: c.row.token },
    idempotencyKey: `kopek-ctp:${tryKey(c.row.token, c.row.tries)}`,
    type: c.row.transaction_type === 'authorization' ? 'authorization' : 'payment',
    client: gateway,
  });
  if (sent.kind === 'answered') return outcomeOf(sent.answer);
  if (sent.kind === 'refused') throw sent.error;
  throw sent.cause ?? new GatewayTimeout(sent.uid, request.tracking_id ?? null);
}

/** No answer in time, but the gateway named the transaction: it waits as incomplete, settled by query. */
const pendingOutcome = (uid: string): CtpOutcome => ({
  status: 'incomplete',
  message: null,
  gatewayResponse: { transaction: { uid, status: 'pending' } },
  uid,
  failed: false,
  finished: false,
});

function afterRecord(row: CtpRow): CtpPayOutcome {
  const redirect = row.gateway_response?.transaction.redirect_url;
  if (row.status === 'incomplete' && typeof redirect === 'string') return { kind: 'redirect', url: redirect };
  return { kind: 'done' };
}

interface TryInput {
  card: Record<string, unknown>;
  customer: Record<string, string>;
  ip: string;
  formTry: number | undefined;
  frame: FrameMode | undefined;
}

/** The gateway in this process: claim, payment and outcome in one transaction (a crash undoes all). */
function payHere(c: CtpCheckout, t: TryInput, gatewayOf: GatewayOf): Promise<CtpPayOutcome> {
  const { ctx } = c;
  const token = c.row.token;
  return ctx.db.tx(async (tx): Promise<CtpPayOutcome> => {
    const now = ctx.clock.now();
    const claimed = await claimCtp(tx, token, now, new Date(now.getTime() + TRY_LEASE_MS), t.formTry);
    if (!claimed) return { kind: 'busy' };
    const here: Ctx = { ...ctx, db: dbWithin(tx, ctx.db.kind) };
    let outcome: CtpOutcome;
    try {
      outcome = await tryOnce(
        { ctx: here, row: claimed },
        gatewayOf(here),
        t.card,
        t.customer,
        t.ip,
        t.frame,
      );
    } catch (err) {
      if (err instanceof GatewayTimeout) {
        // The acquirer did not answer in time; the pending transaction commits with the try.
        if (!err.uid) return { kind: 'done' };
        outcome = pendingOutcome(err.uid);
      } else if (err instanceof ApiError && err.code === 'validation') {
        await releaseCtp(tx, token, claimed.tries);
        return { kind: 'invalid', errors: err.errors };
      } else {
        // Rolled back with the claim: nothing was charged.
        throw err;
      }
    }
    return afterRecord(await recordCtpOutcome(tx, token, outcome, ctx.clock.now()));
  });
}

/** The gateway on another server: the numbered claim commits first, then the gateway is asked. */
async function payRemote(c: CtpCheckout, t: TryInput, gatewayOf: GatewayOf): Promise<CtpPayOutcome> {
  const { ctx } = c;
  const token = c.row.token;
  const now = ctx.clock.now();
  const claimed = await claimCtp(ctx.db, token, now, new Date(now.getTime() + TRY_LEASE_MS), t.formTry);
  if (!claimed) return { kind: 'busy' };
  let outcome: CtpOutcome;
  try {
    outcome = await tryOnce({ ctx, row: claimed }, gatewayOf(ctx), t.card, t.customer, t.ip, t.frame);
  } catch (err) {
    if (err instanceof GatewayTimeout) {
      // The money may have moved: with a uid the page asks about it; without, the claim stays until
      // its lease ends and the try's key is asked about.
      if (err.uid) await recordCtpOutcome(ctx.db, token, pendingOutcome(err.uid), ctx.clock.now());
      return { kind: 'done' };
    }
    if (err instanceof ApiError) {
      // The gateway answered and refused: nothing was charged.
      await releaseCtp(ctx.db, token, claimed.tries);
      if (err.code === 'validation') return { kind: 'invalid', errors: err.errors };
      throw err;
    }
    ctx.log.error(
      { err, checkout: token, try: claimed.tries },
      'a checkout try got no answer from the gateway',
    );
    return { kind: 'unavailable' };
  }
  return afterRecord(await recordCtpOutcome(ctx.db, token, outcome, ctx.clock.now()));
}

export async function payCtpCheckout(
  c: CtpCheckout,
  form: {
    card: Record<string, unknown>;
    customer: Record<string, unknown>;
    ip: string;
    /** The try the form was shown for (its hidden `try`), when it says. */
    formTry?: number | undefined;
    /** The page is in a frame on the shop's page: 3-D Secure returns to it so. */
    frame?: FrameMode | undefined;
  },
  gatewayOf: GatewayOf = checkoutGateway,
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
  const t = { card: form.card, customer, ip: form.ip, formTry: form.formTry, frame: form.frame };
  return ctx.config.gatewayRemote ? payRemote(c, t, gatewayOf) : payHere(c, t, gatewayOf);
}
