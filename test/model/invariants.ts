import type { Queryable } from '../../src/db/db.js';

/**
 * What must hold of a shop's subscriptions after every step of any history, asked of the store
 * itself. Each check is a query that returns one row per violation (`v` says which and why), so an
 * empty answer is a pass. The checks read only the tables: subscriptions, subscription_charges (one
 * row per attempt at a period's charge), transactions (the gateway's ledger: a renewal's payment
 * carries the tracking id `sbs_…-period[-attempt]`, as does the authorization with which a free trial
 * on a 3-D Secure shop verifies the card) and events (the outbox).
 */

export interface Violation {
  check: string;
  /** The subscription it concerns. */
  sub: string;
  v: string;
}

/** The shop's subscriptions, their charges and their payments, as every check sees them. */
const BASE = `
  s AS (
    SELECT s.*, p.number_payment_attempts AS attempts_allowed
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.shop_id = $1
  ),
  c AS (SELECT c.* FROM subscription_charges c JOIN s ON s.id = c.subscription_id),
  pay AS (
    SELECT uid, type, status, created_at, tracking_id, split_part(tracking_id, '-', 1) AS sub,
      split_part(tracking_id, '-', 2)::int AS period,
      COALESCE(NULLIF(split_part(tracking_id, '-', 3), '')::int, 1) AS attempt
    FROM transactions
    WHERE shop_id = $1 AND type IN ('payment', 'authorization')
      AND tracking_id ~ '^sbs_[0-9A-Za-z]+-[0-9]+(-[0-9]+)?$'
  )`;

const OPEN = `('pending', 'unknown', 'incomplete')`;
const attemptName = (t: string) => `${t}.subscription_id || '-' || ${t}.period || '-' || ${t}.attempt`;

/**
 * (a) At most one successful charge per (subscription, period), and every movement of money recorded:
 * a successful payment's attempt records it (or still waits for its answer), a record names its
 * payment, an attempt proven never sent has no payment, no payment is made without its claimed
 * attempt, and no attempt is claimed while an earlier one is still in flight. A card verification's
 * authorization counts as its attempt's payment, and once recorded it has been released (voided).
 */
const MONEY = `
  SELECT 'a.paid_twice' AS "check", sub AS sub, sub || ' period ' || period || ': ' || count(*)
    || ' successful payments; its attempts: ' || (SELECT string_agg(c.attempt || ' ' || c.status, ', ' ORDER BY c.attempt)
      FROM c WHERE c.subscription_id = pay.sub AND c.period = pay.period) AS v
  FROM pay WHERE status = 'successful' GROUP BY sub, period HAVING count(*) > 1
  UNION ALL
  SELECT 'a.recorded_twice', subscription_id, subscription_id || ' period ' || period || ': ' || count(*) || ' successful attempts'
  FROM c WHERE status = 'successful' GROUP BY subscription_id, period HAVING count(*) > 1
  UNION ALL
  SELECT 'a.unrecorded', p.sub, 'payment ' || p.tracking_id || ' (' || p.uid || ') is successful; its attempt is '
    || COALESCE((SELECT c.status || ' with ' || COALESCE(c.transaction_uid::text, 'no uid') FROM c
       WHERE c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt), 'missing')
  FROM pay p WHERE p.status = 'successful' AND NOT EXISTS (
    SELECT 1 FROM c WHERE c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt
      AND (c.status = 'successful' AND c.transaction_uid = p.uid OR c.status IN ${OPEN}))
  UNION ALL
  SELECT 'a.unpaid_record', c.subscription_id, 'attempt ' || ${attemptName('c')} || ' is successful without its successful payment'
  FROM c WHERE c.status = 'successful' AND NOT EXISTS (
    SELECT 1 FROM pay p WHERE p.uid = c.transaction_uid AND p.status = 'successful'
      AND p.sub = c.subscription_id AND p.period = c.period AND p.attempt = c.attempt)
  UNION ALL
  SELECT 'a.abandoned_charged', c.subscription_id, 'attempt ' || ${attemptName('c')} || ' is abandoned, yet the gateway has payment '
    || p.uid || ' (' || p.status || ')'
  FROM c JOIN pay p ON p.sub = c.subscription_id AND p.period = c.period AND p.attempt = c.attempt
  WHERE c.status = 'abandoned'
  UNION ALL
  SELECT 'a.open_behind_newer', o.subscription_id, 'attempt ' || ${attemptName('o')} || ' is still ' || o.status
    || ' behind the newer attempt ' || ${attemptName('n')} || ' (' || n.status || ')'
  FROM c o JOIN c n ON n.subscription_id = o.subscription_id
    AND (n.period > o.period OR n.period = o.period AND n.attempt > o.attempt)
  WHERE o.status IN ${OPEN}
  UNION ALL
  SELECT 'a.verification_held', p.sub, 'verification ' || p.tracking_id || ' (' || p.uid || ') is recorded, never released'
  FROM pay p WHERE p.type = 'authorization' AND p.status = 'successful'
    AND EXISTS (SELECT 1 FROM c WHERE c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt
      AND c.status = 'successful')
    AND NOT EXISTS (SELECT 1 FROM transactions v WHERE v.shop_id = $1 AND v.parent_uid = p.uid
      AND v.type = 'void' AND v.status = 'successful')
  UNION ALL
  SELECT 'a.refund', c.subscription_id, 'attempt ' || ${attemptName('c')} || ' (' || c.status || ', reversal '
    || COALESCE(c.reversal, 'none') || ') has ' || (SELECT count(*) FROM transactions r WHERE r.shop_id = $1
      AND r.parent_uid = c.transaction_uid AND r.type = 'refund' AND r.status = 'successful') || ' refunds'
  FROM c WHERE c.transaction_uid IS NOT NULL AND (
    -- A payment that pays for a period, or that failed, is never refunded by Kopek itself; one
    -- taken after its subscription's cancel is refunded once, in full, as recorded.
    (SELECT count(*) FROM transactions r WHERE r.shop_id = $1 AND r.parent_uid = c.transaction_uid
      AND r.type = 'refund' AND r.status = 'successful')
      <> CASE WHEN c.reversal = 'refunded' THEN 1 ELSE 0 END
    OR c.reversal = 'refunded' AND NOT EXISTS (SELECT 1 FROM transactions r WHERE r.uid = c.reversal_uid
      AND r.parent_uid = c.transaction_uid AND r.type = 'refund' AND r.status = 'successful' AND r.amount = c.amount))
  UNION ALL
  SELECT 'a.payment_without_claim', p.sub, 'payment ' || p.tracking_id || ' (' || p.status || ') has no attempt'
  FROM pay p JOIN s ON s.id = p.sub WHERE NOT EXISTS (
    SELECT 1 FROM c WHERE c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt)`;

/** (b) Nothing is claimed or sent to the gateway for a subscription after it was cancelled (or ended). */
const AFTER_CANCEL = `
  SELECT 'b.claimed_after_cancel' AS "check", c.subscription_id AS sub, 'attempt ' || ${attemptName('c')} || ' claimed at '
    || c.created_at::text || ', cancelled at ' || s.cancelled_at::text AS v
  FROM c JOIN s ON s.id = c.subscription_id WHERE s.cancelled_at IS NOT NULL AND c.created_at > s.cancelled_at
  UNION ALL
  SELECT 'b.charged_after_cancel', p.sub, 'payment ' || p.tracking_id || ' (' || p.status || ') at '
    || p.created_at::text || ', cancelled at ' || s.cancelled_at::text
  FROM pay p JOIN s ON s.id = p.sub WHERE s.cancelled_at IS NOT NULL AND p.created_at > s.cancelled_at
  UNION ALL
  -- A cancel ends the open charge: money a payment took only after the shop cancelled (a 3-D
  -- Secure step passed later, a late answer) is given back, never kept (decisions.md).
  SELECT 'b.kept_after_cancel', p.sub, 'payment ' || p.tracking_id || ' succeeded at ' || t.paid_at::text
    || ', after the cancel at ' || s.cancelled_at::text || ', and was not refunded'
  FROM pay p JOIN s ON s.id = p.sub JOIN transactions t ON t.uid = p.uid
  WHERE p.type = 'payment' AND p.status = 'successful' AND s.cancelled_at IS NOT NULL
    AND s.state = 'canceled' AND t.paid_at > s.cancelled_at
    AND NOT EXISTS (SELECT 1 FROM transactions r WHERE r.shop_id = $1 AND r.parent_uid = p.uid
      AND r.type = 'refund' AND r.status = 'successful')`;

/**
 * (c) The subscription's state agrees with its charges (src/subscriptions/transitions.ts):
 * - paid_billing_cycles is the number of regular periods paid, 1..n without a gap;
 * - cancelled_at is set exactly in the ended states (failed, error, canceled);
 * - by state, the last attempt (highest period, then attempt) is what the state says: active ⇒ the
 *   paid period's success, or a retry (or an attempt in flight) of the next one with
 *   number_failed_payment_attempts counting its failures; trial ⇒ paid 0, a successful trial charge
 *   or a failed retry of period 1 after a paid trial; processing / trial_processing ⇒ an attempt in
 *   flight; redirecting ⇒ no charge yet or one waiting for 3-D Secure; failed ⇒ the very first
 *   charge failed, erred or never reached the gateway, or every retry after an earlier success
 *   failed; error ⇒ every retry after an earlier success erred;
 * - last_transaction is the newest attempt's transaction, with its status once final, and a final
 *   attempt's status is its transaction's in the ledger.
 */
const STATE_CTES = `
  agg AS (
    SELECT s.id, s.state, s.cancelled_at, s.paid_billing_cycles AS paid,
      s.number_failed_payment_attempts AS fails, s.attempts_allowed, s.last_transaction,
      -- A payment refunded because its subscription's cancel came first pays for no period.
      (SELECT max(period) FROM c WHERE c.subscription_id = s.id AND c.status = 'successful' AND c.period >= 1
        AND c.reversal IS NULL) AS max_paid,
      (SELECT count(DISTINCT period) FROM c WHERE c.subscription_id = s.id AND c.status = 'successful' AND c.period >= 1
        AND c.reversal IS NULL) AS n_paid,
      -- A successful charge before: money taken (a card verification's authorization, released at
      -- once, takes none: a free trial's first payment is still its first).
      EXISTS (SELECT 1 FROM c WHERE c.subscription_id = s.id AND c.status = 'successful'
        AND NOT EXISTS (SELECT 1 FROM transactions v WHERE v.uid = c.transaction_uid AND v.type = 'authorization')) AS earlier,
      (SELECT count(*) FROM c WHERE c.subscription_id = s.id AND c.period = s.paid_billing_cycles + 1
        AND c.status IN ('failed', 'error')) AS failed_next,
      l.period AS last_period, l.status AS last_status, u.transaction_uid AS lu_uid, u.status AS lu_status
    FROM s
    LEFT JOIN LATERAL (SELECT * FROM c WHERE c.subscription_id = s.id ORDER BY period DESC, attempt DESC LIMIT 1) l ON true
    LEFT JOIN LATERAL (SELECT * FROM c WHERE c.subscription_id = s.id AND c.transaction_uid IS NOT NULL
      ORDER BY period DESC, attempt DESC LIMIT 1) u ON true
  ),
  described AS (
    SELECT *, id || ' ' || state || ' (paid ' || paid || ', failures ' || fails || ', last attempt '
      || COALESCE('period ' || last_period || ' ' || last_status, 'none') || ')' AS what FROM agg
  )`;
const STATE = `
  SELECT 'c.paid_cycles' AS "check", id AS sub, what || ': successful periods ' || COALESCE(max_paid::text, 'none')
    || ' (' || n_paid || ' distinct)' AS v
  FROM described WHERE paid <> COALESCE(max_paid, 0) OR n_paid <> paid
  UNION ALL
  SELECT 'c.cancelled_iff_ended', id, what || ', cancelled_at ' || COALESCE(cancelled_at::text, 'null')
  FROM described WHERE (cancelled_at IS NOT NULL) <> (state IN ('failed', 'error', 'canceled'))
  UNION ALL
  SELECT 'c.state_vs_last_charge', id, what FROM described WHERE NOT CASE state
    WHEN 'active' THEN paid >= 1 AND fails = failed_next AND (
      last_status = 'successful' AND last_period = paid
      OR last_period = paid + 1 AND last_status IN ('failed', 'error', 'pending', 'unknown', 'abandoned'))
    WHEN 'trial' THEN paid = 0 AND fails = failed_next AND (
      last_status IS NULL OR last_period = 0 AND last_status = 'successful'
      OR last_period = 1 AND last_status IN ('failed', 'error') AND earlier)
    WHEN 'trial_processing' THEN paid = 0 AND last_status IN ('pending', 'unknown', 'abandoned')
    WHEN 'processing' THEN paid = 0 AND last_period = 1 AND last_status IN ('pending', 'unknown')
    WHEN 'pending' THEN last_status IN ('pending', 'unknown')
    WHEN 'redirecting' THEN paid = 0 AND (last_status IS NULL OR last_status = 'incomplete')
    WHEN 'failed' THEN CASE WHEN earlier THEN last_status = 'failed' AND fails >= attempts_allowed
      ELSE last_status IN ('failed', 'error', 'abandoned') END
    WHEN 'error' THEN earlier AND last_status = 'error' AND fails >= attempts_allowed
    WHEN 'canceled' THEN true
    ELSE false END
  UNION ALL
  SELECT 'c.last_transaction', id, what || ': last_transaction ' || COALESCE(last_transaction::text, 'null')
    || ', newest attempt with a transaction ' || COALESCE(lu_uid::text || ' ' || lu_status, 'none')
  FROM described WHERE (lu_uid IS NULL) <> (last_transaction IS NULL)
    OR last_transaction->>'uid' <> lu_uid::text
    OR lu_status IN ('successful', 'failed', 'error', 'incomplete') AND last_transaction->>'status' <> lu_status
  UNION ALL
  SELECT 'c.ledger_agrees', c.subscription_id, 'attempt ' || ${attemptName('c')} || ' is ' || c.status || '; its transaction '
    || COALESCE(t.status || ' ' || COALESCE(t.tracking_id, 'no tracking id'), 'is missing')
  FROM c LEFT JOIN transactions t ON t.uid = c.transaction_uid
  WHERE c.transaction_uid IS NOT NULL AND c.status IN ('successful', 'failed', 'error') AND (
    t.uid IS NULL OR t.status <> c.status OR t.tracking_id <> CASE WHEN c.attempt = 1
      THEN c.subscription_id || '-' || c.period ELSE ${attemptName('c')} END)`;

/** States in which a charge is in flight: no event exists for them; what follows them is announced. */
const IN_FLIGHT = `('processing', 'trial_processing', 'pending')`;

/**
 * (d) Every state change has its event, in order: the first event is created.subscription; the newest
 * event shows the state the subscription is in (unless a charge is in flight: that is announced by
 * its outcome); an ended subscription was announced cancelled once
 * (a failed or error one also as such); every regular period paid before the end was announced
 * (activated once, then renewed); and events never go back in time or in paid periods.
 */
const EVENTS_CTES = `
  ev AS (
    SELECT e.id, e.resource_id AS sub, e.event, e.payload->>'state' AS state,
      (e.payload->>'paid_billing_cycles')::int AS paid, e.created_at,
      row_number() OVER (PARTITION BY e.resource_id ORDER BY e.id) AS n,
      row_number() OVER (PARTITION BY e.resource_id ORDER BY e.id DESC) AS back,
      lag(e.created_at) OVER (PARTITION BY e.resource_id ORDER BY e.id) AS prev_at,
      lag((e.payload->>'paid_billing_cycles')::int) OVER (PARTITION BY e.resource_id ORDER BY e.id) AS prev_paid
    FROM events e WHERE e.shop_id = $1 AND e.resource_type = 'subscription'
  ),
  counts AS (
    SELECT s.id, s.state, s.cancelled_at,
      (SELECT string_agg(ev.event || '(' || COALESCE(ev.state, '?') || ')', ' ' ORDER BY ev.id) FROM ev WHERE ev.sub = s.id) AS events,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'created.subscription') AS created,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'canceled.subscription') AS canceled,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'failed.subscription') AS failed,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'error.subscription') AS errored,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'activated.subscription') AS activated,
      (SELECT count(*) FROM ev WHERE ev.sub = s.id AND ev.event = 'renewed.subscription') AS renewed,
      (SELECT count(*) FROM c WHERE c.subscription_id = s.id AND c.status = 'successful' AND c.period >= 1
        AND c.reversal IS NULL AND (s.cancelled_at IS NULL OR c.updated_at <= s.cancelled_at)) AS paid_before_end,
      (SELECT ev.event FROM ev WHERE ev.sub = s.id AND ev.n = 1) AS first_event,
      (SELECT ev.state FROM ev WHERE ev.sub = s.id AND ev.back = 1) AS announced
    FROM s
  )`;
const EVENTS = `
  SELECT 'd.created_first' AS "check", id AS sub, id || ': ' || COALESCE(events, 'no events') AS v
  FROM counts WHERE created <> 1 OR first_event IS DISTINCT FROM 'created.subscription'
  UNION ALL
  SELECT 'd.state_announced', id, id || ' is ' || state || ', its newest event says ' || COALESCE(announced, 'nothing')
    || ': ' || COALESCE(events, 'no events')
  FROM counts WHERE state NOT IN ${IN_FLIGHT} AND announced IS DISTINCT FROM state
  UNION ALL
  SELECT 'd.end_announced', id, id || ' ' || state || ': ' || COALESCE(events, 'no events')
  FROM counts WHERE canceled <> (CASE WHEN cancelled_at IS NULL THEN 0 ELSE 1 END)
    OR state = 'failed' AND failed <> 1 OR state = 'error' AND errored <> 1
    OR state NOT IN ('failed', 'error') AND failed + errored > 0 AND state <> 'canceled'
  UNION ALL
  SELECT 'd.paid_announced', id, id || ' ' || state || ': ' || paid_before_end || ' periods paid before its end, '
    || activated || ' activated and ' || renewed || ' renewed events: ' || COALESCE(events, 'no events')
  FROM counts WHERE activated + renewed <> paid_before_end OR activated > 1
  UNION ALL
  SELECT 'd.period_length', x.sub, x.sub || ' paid period ' || x.paid || ' until ' || x.until::text
    || ', period ' || x.prev_paid || ' until ' || x.prev_until::text
  FROM (
    SELECT ev.sub, ev.paid, (e.payload->>'active_to')::timestamptz AS until,
      lag(ev.paid) OVER w AS prev_paid, lag((e.payload->>'active_to')::timestamptz) OVER w AS prev_until
    FROM ev JOIN events e ON e.id = ev.id
    WHERE ev.event IN ('activated.subscription', 'renewed.subscription')
    WINDOW w AS (PARTITION BY ev.sub ORDER BY ev.id)
  ) x JOIN s ON s.id = x.sub JOIN plans p ON p.id = s.plan_id
  -- One payment per period, each period as long as its plan says in any zone and after any change
  -- of the shop's zone: a month 27 to 32 days, a day 24 hours. The first period starts at the
  -- billing anchor (the start, or the end of the trial).
  WHERE (x.paid = x.prev_paid + 1 OR x.prev_paid IS NULL AND x.paid = 1) AND p."interval" = 1
    AND NOT CASE p.interval_unit
    WHEN 'month' THEN x.until - COALESCE(x.prev_until, s.billing_anchor)
      BETWEEN interval '27 days' AND interval '32 days'
    WHEN 'day' THEN x.until - COALESCE(x.prev_until, s.billing_anchor) = interval '24 hours'
    ELSE true END
  UNION ALL
  SELECT 'd.in_order', sub, sub || ' event ' || n || ' ' || event || ' at ' || created_at::text || ' (paid ' || paid
    || ') after ' || prev_at::text || ' (paid ' || prev_paid || ')'
  FROM ev WHERE created_at < prev_at OR paid < prev_paid`;

/**
 * (e) Once every lease has run out and billing has run, no attempt is left waiting for an answer the
 * gateway has already given: a payment's outcome is recorded, or the attempt abandoned, whatever
 * happened to the subscription meanwhile. Only a 3-D Secure step may wait for its cardholder. Asked
 * at the end of a history, after the shop's clock has passed every lease.
 */
const SETTLED = `WITH ${BASE}
  SELECT 'e.left_open' AS "check", c.subscription_id AS sub, 'attempt ' || ${attemptName('c')} || ' is still '
    || c.status || ' on a ' || s.state || ' subscription; the gateway has '
    || COALESCE((SELECT string_agg(p.status, ', ') FROM pay p
       WHERE p.sub = c.subscription_id AND p.period = c.period AND p.attempt = c.attempt), 'no payment') AS v
  FROM c JOIN s ON s.id = c.subscription_id WHERE c.status IN ('pending', 'unknown') AND c.created_at <= $2
  UNION ALL
  SELECT 'e.refund_left_due', c.subscription_id, 'attempt ' || ${attemptName('c')} || ' took money after its cancel'
    || ' and is not refunded'
  FROM c WHERE c.status = 'successful' AND c.reversal = 'due' AND c.created_at <= $2`;

/** (a) to (d) as one query: planned once, the shop's rows read once. */
export const INVARIANTS = `WITH ${BASE}, ${STATE_CTES}, ${EVENTS_CTES}
  ${[MONEY, AFTER_CANCEL, STATE, EVENTS].join('\n  UNION ALL\n')}`;

// One per process: on PostgreSQL the run's workers share one store, and each drops its own when its
// files are done.
const FUNCTION = `kopek_model_violations_${process.pid}`;

/**
 * Stores (a) to (d) as a function of the store for the run: a query this size costs far more to plan
 * than to run over one shop's rows, and a function's plan is kept. `removeInvariants` drops it.
 */
export async function installInvariants(db: Queryable): Promise<void> {
  await db.query(`CREATE OR REPLACE FUNCTION ${FUNCTION}(shop integer)
    RETURNS TABLE ("check" text, sub text, v text) LANGUAGE plpgsql STABLE AS $fn$
    #variable_conflict use_column
    BEGIN RETURN QUERY ${INVARIANTS.replaceAll('$1', 'shop')}; END $fn$`);
}

export async function removeInvariants(db: Queryable): Promise<void> {
  await db.query(`DROP FUNCTION IF EXISTS ${FUNCTION}(integer)`);
}

/** Every violation of (a) to (d) in the shop's store right now (installInvariants first). */
export function violations(db: Queryable, shopId: number): Promise<Violation[]> {
  return db.query<Violation>(`SELECT * FROM ${FUNCTION}($1)`, [shopId]);
}

/** Violations of (e): attempts claimed up to `before` still waiting for an answer. */
export function leftOpen(db: Queryable, shopId: number, before: Date): Promise<Violation[]> {
  return db.query<Violation>(SETTLED, [shopId, before]);
}
