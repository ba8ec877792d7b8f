import { DateTime } from 'luxon';
import { vi } from 'vitest';
import { billDue, LEASE_MS } from '../../src/billing/renew.js';
import { nextDueOfShop } from '../../src/billing/repository.js';
import type { Services } from '../../src/context.js';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { threeDSecureStep } from '../../src/gateway/three-ds.js';
import { finishThreeDSecureStep } from '../../src/gateway/three-ds-finish.js';
import { moveShopClock } from '../../src/shops/repository.js';
import { loadSubscriptionCheckout, paySubscriptionCheckout } from '../../src/subscriptions/hosted-payment.js';
import { settleSubscriptionOfTransaction } from '../../src/subscriptions/settle.js';
import { type Client, client, type Harness, newShop, type TestShop } from '../harness.js';

/**
 * One random history's system under test: a test shop of its own on the worker's shared store, its
 * subscriptions, and the verbs the model's commands drive (the API as a shop calls it, the hosted
 * page and the 3-D Secure step as a buyer uses them, the billing engine as the scheduler runs it, and
 * a billing process that dies at a chosen point).
 */

/** Sandbox cards by what their charges do (src/gateway/test-cards.ts). */
export const CARDS = {
  approved: '4200000000000000',
  declined: '4005550000000019',
  error: KOPEK_CARDS.error,
  timeout: KOPEK_CARDS.timeout,
  firstThenDeclined: KOPEK_CARDS.firstThenDeclined,
  /** Enrolled in 3-D Secure with a challenge the cardholder passes or fails. */
  challenge: '4012000000001097',
  /** Enrolled in 3-D Secure, frictionless, authentication rejected: the first charge fails. */
  frictionlessRejected: '4012000000001030',
} as const;
export type CardKind = keyof typeof CARDS;

/** Cards a subscription's next charge may be switched to, and a token the gateway refuses (an error). */
export type NextCharge = 'approved' | 'declined' | 'error' | 'timeout' | 'refused';

const monthly = { amount: 1999, interval: 1, interval_unit: 'month' };
const daily = { amount: 499, interval: 1, interval_unit: 'day' };
export const PLANS = {
  monthly: { title: 'Gold', currency: 'EUR', plan: monthly },
  daily: { title: 'Daily', currency: 'EUR', plan: daily },
  freeTrial: {
    title: 'Free trial',
    currency: 'EUR',
    plan: monthly,
    trial: { amount: 0, interval: 7, interval_unit: 'day' },
  },
  paidTrial: {
    title: 'Paid trial',
    currency: 'EUR',
    plan: monthly,
    trial: { amount: 100, interval: 7, interval_unit: 'day' },
  },
  finite: { title: 'Three days', currency: 'EUR', plan: daily, infinite: false, billing_cycles: 3 },
} as const;
export type PlanKind = keyof typeof PLANS;

export type KillPoint = 'in_claim' | 'before_send' | 'after_answer';

/** Zones a shop may be in: each side of UTC, with and without daylight saving time. */
export const ZONES = ['UTC', 'Asia/Tokyo', 'Europe/Minsk', 'America/New_York', 'Australia/Sydney'] as const;
export type Zone = (typeof ZONES)[number];

/** The shop's quiet hours for a whole history: none, across midnight, or within a night. */
export const QUIET = {
  none: null,
  night: { start: '22:00', end: '07:00' },
  early: { start: '01:00', end: '05:30' },
} as const;
export type QuietKind = keyof typeof QUIET;

/** Whether the local time of `at` in `zone` falls inside `quiet` (start after end crosses midnight). */
export function insideQuiet(at: Date, zone: string, quiet: { start: string; end: string }): boolean {
  const local = DateTime.fromJSDate(at, { zone });
  const minutes = local.hour * 60 + local.minute;
  const [sh, sm] = quiet.start.split(':').map(Number);
  const [eh, em] = quiet.end.split(':').map(Number);
  const start = (sh as number) * 60 + (sm as number);
  const end = (eh as number) * 60 + (em as number);
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

const cardOf = (number: string) => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
});
const customer = { email: 'jane@example.com', ip: '203.0.113.7' };

export class ProcessKilled extends Error {}

export class World {
  readonly subs: string[] = [];
  readonly #tokens = new Map<string, string>();
  /** The shop's zone now, and each subscription's when it was created (what it is counted in). */
  zone: Zone = 'UTC';
  readonly #subZone = new Map<string, Zone>();
  readonly #subPlan = new Map<string, PlanKind>();
  quiet: QuietKind = 'none';

  private constructor(
    readonly h: Harness,
    readonly shop: TestShop,
    readonly api: Client,
    readonly services: Services,
  ) {}

  static async open(
    h: Harness,
    threeDs: boolean,
    zone: Zone = 'UTC',
    quiet: QuietKind = 'none',
  ): Promise<World> {
    const shop = await newShop(h, { threeDs });
    const world = new World(h, shop, client(h, shop), h.app.services);
    await world.patchShop({ time_zone: zone, quiet_hours: QUIET[quiet] });
    world.zone = zone;
    world.quiet = quiet;
    return world;
  }

  async patchShop(body: Record<string, unknown>): Promise<void> {
    const res = await this.api.send('PATCH', '/shop', body);
    if (res.status !== 200) throw new Error(`PATCH /shop answered ${res.status}: ${res.text}`);
  }

  /** The shop moves to another time zone (its existing subscriptions keep theirs). */
  async setZone(zone: Zone): Promise<void> {
    await this.patchShop({ time_zone: zone });
    this.zone = zone;
  }

  /**
   * Renewal payments (not a first charge, which the cardholder makes) made inside the shop's quiet
   * hours, read on the clock of the zone each subscription was created in.
   */
  async paidInQuietHours(): Promise<{ sub: string; v: string }[]> {
    const quiet = QUIET[this.quiet];
    if (!quiet) return [];
    const rows = await this.h.db.query<{ tracking_id: string; created_at: Date }>(
      `SELECT tracking_id, created_at FROM transactions
       WHERE shop_id = $1 AND type = 'payment' AND tracking_id ~ '^sbs_[0-9A-Za-z]+-[0-9]+(-[0-9]+)?$'`,
      [this.shopId],
    );
    return rows.flatMap((r) => {
      const [sub = '', period = '0', attempt = '1'] = r.tracking_id.split('-');
      const plan = this.#subPlan.get(sub);
      const zone = this.#subZone.get(sub);
      if (!plan || !zone) return [];
      const trial = 'trial' in PLANS[plan];
      const renewal = Number(attempt) > 1 || Number(period) >= 2 || (Number(period) === 1 && trial);
      if (!renewal || !insideQuiet(r.created_at, zone, quiet)) return [];
      const local = DateTime.fromJSDate(r.created_at, { zone }).toFormat('yyyy-MM-dd HH:mm');
      return [
        {
          sub,
          v: `${r.tracking_id} charged at ${local} ${zone}, inside quiet hours ${quiet.start}-${quiet.end}`,
        },
      ];
    });
  }

  get shopId(): number {
    return this.shop.shop.id;
  }

  sub(pick: number): string {
    return this.subs[pick % this.subs.length] as string;
  }

  async #created(
    res: { status: number; text: string; body: { id?: string } },
    plan: PlanKind,
  ): Promise<string> {
    if (res.status !== 201 || !res.body.id) throw new Error(`create answered ${res.status}: ${res.text}`);
    if (!this.#subPlan.has(res.body.id)) {
      this.subs.push(res.body.id);
      this.#subZone.set(res.body.id, this.zone);
      this.#subPlan.set(res.body.id, plan);
    }
    return res.body.id;
  }

  /**
   * A keyed create sent, then sent again with the same key as a client retries (at once, or while
   * the first is still running): one subscription, whatever the answers.
   */
  async createKeyed(plan: PlanKind, card: CardKind, concurrent: boolean): Promise<string> {
    const key = `model-${this.subs.length}-${Math.random().toString(36).slice(2)}`;
    const body = { plan: PLANS[plan], customer, card: cardOf(CARDS[card]) };
    const send = () => this.api.post('/subscriptions', body, { 'idempotency-key': key });
    const answers = concurrent ? await Promise.all([send(), send()]) : [await send(), await send()];
    const created = answers.filter((a) => a.status === 201);
    // A retry while the first still runs is 409; every 201 names the one subscription.
    if (answers.some((a) => a.status !== 201 && a.status !== 409) || created.length === 0)
      throw new Error(`keyed creates answered ${answers.map((a) => `${a.status} ${a.text}`).join('; ')}`);
    const ids = new Set(created.map((a) => a.body.id));
    if (ids.size !== 1) throw new Error(`one key made ${ids.size} subscriptions: ${[...ids].join(', ')}`);
    return this.#created(created[0] as (typeof created)[number], plan);
  }

  /** Several creates at once, as a busy shop sends them (grouped commits on PostgreSQL). */
  async createConcurrently(plan: PlanKind, cards: readonly CardKind[]): Promise<void> {
    const answers = await Promise.all(
      cards.map((card) =>
        this.api.post('/subscriptions', { plan: PLANS[plan], customer, card: cardOf(CARDS[card]) }),
      ),
    );
    for (const a of answers) await this.#created(a, plan);
  }

  /** A token of the shop's for a card number, tokenized once per history. */
  async token(number: string): Promise<string> {
    const known = this.#tokens.get(number);
    if (known) return known;
    const res = await this.api.post('/credit_cards', { request: { credit_card: cardOf(number) } });
    if (res.status !== 200 || typeof res.body?.token !== 'string') {
      throw new Error(`tokenizing answered ${res.status}: ${res.text}`);
    }
    this.#tokens.set(number, res.body.token);
    return res.body.token;
  }

  createByCard(plan: PlanKind, card: CardKind): Promise<string> {
    return this.api
      .post('/subscriptions', { plan: PLANS[plan], customer, card: cardOf(CARDS[card]) })
      .then((r) => this.#created(r, plan));
  }

  async createByToken(plan: PlanKind, card: CardKind): Promise<string> {
    const token = await this.token(CARDS[card]);
    const res = await this.api.post('/subscriptions', { plan: PLANS[plan], customer, card: { token } });
    return this.#created(res, plan);
  }

  /** The redirect variant; the buyer then pays on the hosted page with `card`, or never comes. */
  async createByPage(plan: PlanKind, card: CardKind | 'abandon'): Promise<string> {
    const res = await this.api.post('/subscriptions', { plan: PLANS[plan], customer });
    const id = await this.#created(res, plan);
    if (card === 'abandon') return id;
    const sc = await loadSubscriptionCheckout(this.services, res.body.token);
    if (!sc) throw new Error(`checkout ${res.body.token} not found`);
    const paid = await paySubscriptionCheckout(sc, { card: cardOf(CARDS[card]), ip: customer.ip });
    if (paid.kind !== 'done') throw new Error(`paying the page answered ${JSON.stringify(paid)}`);
    return id;
  }

  /** The cardholder finishes a waiting 3-D Secure step; false when the subscription has none. */
  async finishThreeDs(pick: number, outcome: 'passed' | 'failed'): Promise<boolean> {
    const [row] = await this.h.db.query<{ transaction_uid: string }>(
      `SELECT transaction_uid FROM subscription_charges
       WHERE subscription_id = $1 AND status = 'incomplete' AND transaction_uid IS NOT NULL`,
      [this.sub(pick)],
    );
    if (!row) return false;
    const step = await threeDSecureStep(this.services, row.transaction_uid);
    if (!step) throw new Error(`no 3-D Secure step for ${row.transaction_uid}`);
    await finishThreeDSecureStep(this.services, step, outcome, settleSubscriptionOfTransaction);
    return true;
  }

  /**
   * The shop cancels; 422 when the subscription has ended already. `keyed`: with an
   * Idempotency-Key, sent a second time as a client retries, which must answer the same.
   */
  async cancel(pick: number, keyed = false): Promise<number> {
    const headers: Record<string, string> = keyed
      ? { 'idempotency-key': `cancel-${this.sub(pick)}-${Math.random().toString(36).slice(2)}` }
      : {};
    const url = `/subscriptions/${this.sub(pick)}/cancel`;
    const res = await this.api.post(url, { cancel_reason: 'model' }, headers);
    if (res.status !== 200 && res.status !== 422)
      throw new Error(`cancel answered ${res.status}: ${res.text}`);
    if (keyed) {
      const again = await this.api.post(url, { cancel_reason: 'model' }, headers);
      if (again.status !== res.status || again.text !== res.text)
        throw new Error(
          `a keyed cancel retried answered ${again.status} ${again.text}, first ${res.status} ${res.text}`,
        );
    }
    return res.status;
  }

  /** The shop reads the subscription (which settles a charge left open, as any read does). */
  async read(pick: number): Promise<void> {
    const res = await this.api.get(`/subscriptions/${this.sub(pick)}`);
    if (res.status !== 200) throw new Error(`read answered ${res.status}: ${res.text}`);
  }

  /**
   * The subscription's next charge goes to another card (by SQL: the API has no card change for a
   * subscription), so the model chooses whether it is approved, declined, errs, times out or is
   * refused by the gateway (a token it does not know).
   */
  async switchCard(pick: number, next: NextCharge): Promise<void> {
    const token = next === 'refused' ? 'unknown-token' : await this.token(CARDS[next]);
    await this.h.db.query(
      'UPDATE subscriptions SET card_token = $2 WHERE id = $1 AND card_token IS NOT NULL',
      [this.sub(pick), token],
    );
  }

  async advance(by: string): Promise<void> {
    const res = await this.api.post('/test_clock/advance', { by });
    if (res.status !== 200) throw new Error(`advance answered ${res.status}: ${res.text}`);
  }

  /** The shop's own time: real time plus its test clock's offset. */
  async shopNow(): Promise<Date> {
    const [row] = await this.h.db.query<{ clock_offset_ms: string | number }>(
      'SELECT clock_offset_ms FROM shops WHERE id = $1',
      [this.shopId],
    );
    return new Date(this.h.clock.now().getTime() + Number(row?.clock_offset_ms ?? 0));
  }

  /** A billing run now, as the scheduler starts one. */
  async bill(): Promise<void> {
    await billDue(this.services, { shopId: this.shopId });
  }

  /** A new billing process after the dead one's leases ran out: the shop's clock passes them. */
  restart(): Promise<void> {
    return this.advance(`PT${LEASE_MS / 1000 + 1}S`);
  }

  /**
   * Moves the shop's clock to the next instant something falls due (no further than `maxDays`) and
   * bills it with a process that dies at `point`: while planning a payment inside its claim
   * (everything uncommitted is lost), after claiming an attempt but before the payment reached the
   * gateway, or after the gateway charged but before its answer was recorded. From its death on,
   * the process does nothing more. False when nothing falls due.
   */
  async killBilling(point: KillPoint, maxDays = 62): Promise<boolean> {
    const due = await nextDueOfShop(this.h.db, this.shopId);
    const now = await this.shopNow();
    if (!due || due.getTime() - now.getTime() > maxDays * 86_400_000) return false;
    await moveShopClock(this.h.db, this.shopId, due.getTime() - this.h.clock.now().getTime());
    this.h.app.shopAuthenticator.forget(this.shopId);

    const proto = InProcessGatewayClient.prototype;
    const real = {
      payment: proto.payment,
      planPayment: proto.planPayment,
      query: proto.query,
      queryByTrackingId: proto.queryByTrackingId,
    };
    let dead = false;
    const gone = () => new ProcessKilled('the billing process is gone');
    const spies = [
      vi.spyOn(proto, 'planPayment').mockImplementation(async function (this: InProcessGatewayClient, ...a) {
        if (dead) throw gone();
        // Step by step, as over HTTP, unless the process is to die inside its claim.
        if (point !== 'in_claim') return undefined;
        const planned = await real.planPayment.apply(this, a);
        if (planned) {
          dead = true;
          throw new ProcessKilled('killed while its planned payment was not yet committed');
        }
        return planned;
      }),
      vi.spyOn(proto, 'payment').mockImplementation(async function (this: InProcessGatewayClient, ...a) {
        if (dead) throw gone();
        dead = true;
        if (point === 'before_send') throw new ProcessKilled('killed before the payment left');
        try {
          await real.payment.apply(this, a);
        } catch {
          // Whatever the gateway answered, nobody is left to hear it.
        }
        throw new ProcessKilled('killed after the gateway charged');
      }),
      vi.spyOn(proto, 'query').mockImplementation(async function (this: InProcessGatewayClient, ...a) {
        if (dead) throw gone();
        return real.query.apply(this, a);
      }),
      vi.spyOn(proto, 'queryByTrackingId').mockImplementation(async function (
        this: InProcessGatewayClient,
        ...a
      ) {
        if (dead) throw gone();
        return real.queryByTrackingId.apply(this, a);
      }),
    ];
    try {
      await billDue(this.services, { shopId: this.shopId }).catch((err: unknown) => {
        if (!(err instanceof ProcessKilled)) throw err;
      });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    return true;
  }
}
