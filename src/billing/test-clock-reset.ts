/**
 * A test shop's clean start (`POST /test_clock/reset`, `kopek`'s users after the README's tour):
 * everything the shop did is deleted and its clock stands at real time again, as a new shop's. The
 * shop itself stays: its id, keys, settings, webhook secret and the cabinet's sessions.
 */
import type { Services } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { Statement } from '../db/db.js';
import { shopById } from '../shops/index.js';
import type { TestClockView } from './test-clock.js';

export const ResetMsg = {
  liveShop:
    "Only a test shop can be reset: a live shop's customers, subscriptions and payments are never deleted",
  unknownShop: 'Record not found',
} as const;

/**
 * The shop's rows, table by table, each before what it hangs off (the foreign keys): a delivery's
 * attempts before the delivery, before its event; a subscription's charges and checkout pages before
 * it; proofs before their transactions and documents. Everything of the shop, so nothing it did
 * before (an idempotency key's stored answer, a card's duplicate-charge stamp) is seen after.
 */
const TABLES = [
  'event_attempts',
  'deliveries',
  'emails',
  'events',
  'checkouts',
  'subscription_charges',
  'subscriptions',
  'plans',
  'customers',
  'proofs',
  'proof_documents',
  'transaction_history',
  'product_orders',
  'ctp_checkouts',
  'cabinet_form_nonces',
  'transactions',
  'charge_fingerprints',
  'cards',
  'products',
  'idempotency_keys',
] as const;

export type ResetCounts = Record<(typeof TABLES)[number], number>;

export interface ResetSummary {
  test_clock: TestClockView;
  /** How many rows of each kind were deleted. */
  deleted: {
    customers: number;
    subscriptions: number;
    transactions: number;
    products: number;
    plans: number;
    cards: number;
    notifications: number;
    emails: number;
  };
}

function statements(shopId: number, keepKey: string | undefined): Statement[] {
  return [
    // The store's guards let plans, customers and cards go only in a transaction that says whose
    // reset it is, and only a test shop's (migration 037).
    { sql: "SELECT set_config('kopek.reset_shop', $1, true)", params: [String(shopId)] },
    ...TABLES.map((table) =>
      table === 'idempotency_keys'
        ? {
            // The reset's own key stays: its answer is stored for a retry, which then deletes nothing.
            sql: `WITH gone AS (DELETE FROM idempotency_keys WHERE shop_id = $1 AND key IS DISTINCT FROM $2 RETURNING 1)
                  SELECT count(*)::int AS n FROM gone`,
            params: [shopId, keepKey ?? null],
          }
        : {
            sql: `WITH gone AS (DELETE FROM ${table} WHERE shop_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`,
            params: [shopId],
          },
    ),
    // The clock moves only forward, except here: the clean start is the one way back to now.
    { sql: 'UPDATE shops SET clock_offset_ms = 0 WHERE id = $1 AND test', params: [shopId] },
  ];
}

/**
 * Deletes everything the test shop did and sets its clock to now, in one transaction: all of it or,
 * on any error, nothing. Live shops: 403, and nothing is touched. `keepKey` is the request's own
 * Idempotency-Key, whose stored answer stays.
 */
export async function resetTestShop(
  services: Services,
  shopId: number,
  keepKey?: string,
): Promise<ResetSummary> {
  const shop = await shopById(services.db, shopId);
  if (!shop) throw ApiError.notFound(ResetMsg.unknownShop);
  if (!shop.test) throw ApiError.base('forbidden', ResetMsg.liveShop);
  const results = await services.db.batch<{ n: number }>(statements(shopId, keepKey));
  // The first statement names the reset; each table's count follows.
  const counts = Object.fromEntries(
    TABLES.map((table, i) => [table, results[i + 1]?.[0]?.n ?? 0]),
  ) as ResetCounts;
  return {
    test_clock: {
      now: services.clock.now().toISOString(),
      offset_seconds: 0,
      time_zone: shop.timeZone,
    },
    deleted: {
      customers: counts.customers,
      subscriptions: counts.subscriptions,
      transactions: counts.transactions,
      products: counts.products,
      plans: counts.plans,
      cards: counts.cards,
      notifications: counts.events,
      emails: counts.emails,
    },
  };
}
