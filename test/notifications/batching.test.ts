import { afterAll, describe, expect, it } from 'vitest';
import type { Db, Statement } from '../../src/db/db.js';
import { deliverDue, LEASE_MS } from '../../src/notifications/deliver.js';
import { OutcomeWriter } from '../../src/notifications/outcomes.js';
import { type AttemptRecord, claimDue, type DueRow, type Next } from '../../src/notifications/queue.js';
import { withClock } from '../harness.js';
import { type NotifyShop, notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * Claims take due notifications in one statement, and outcomes are written in groups (one commit for
 * the deliveries that finished together): every attempt is still recorded, each event's new state is
 * the one its own outcome calls for, and a group that never commits (the process died, the store went
 * away) leaves its notifications leased and pending, to be sent again once the lease runs out.
 */

let rx: Receiver | undefined;
afterAll(() => rx?.close());

/** `n` subscriptions notified to `url`: two events each (created, then activated). */
async function subscriptions(s: NotifyShop, url: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await s.subscribe(url));
  return ids;
}

const claim = (s: NotifyShop, limit: number, held = new Map<number, number>(), perShop = 100) =>
  claimDue(s.h.db, s.h.clock.now(), { limit, held, perShop, shopId: s.shop.shop.id }, LEASE_MS);

const recordOf = (row: DueRow, at: Date, statusCode: number | null): AttemptRecord => ({
  eventId: row.id,
  shopId: row.shop_id,
  n: row.attempts,
  seriesFrom: row.series_from,
  at,
  statusCode,
  durationMs: 3,
  response: statusCode === null ? null : `answer ${statusCode}`,
  error: statusCode === null ? 'ECONNRESET: socket hang up' : null,
});

const eventRow = async (s: NotifyShop, id: number) =>
  (
    await s.h.db.query<{
      status: string;
      attempts: number;
      leased_until: Date | null;
      next_attempt_at: Date | null;
    }>('SELECT status, attempts, leased_until, next_attempt_at FROM deliveries WHERE event_id = $1', [id])
  )[0];

const attemptRows = (s: NotifyShop, id: number) =>
  s.h.db.query<{ n: number; status_code: number | null; response: string | null; error: string | null }>(
    'SELECT n, status_code, response, error FROM event_attempts WHERE event_id = $1 ORDER BY n',
    [id],
  );

describe('claiming due notifications', () => {
  it('takes the oldest due first, one event per subscription, and no shop past its limit', async () => {
    const s = await notifyShop();
    await subscriptions(s, 'http://127.0.0.1:9/hook', 3);
    // The shop holds 3 of its 4 slots already: one more may be taken.
    const one = await claim(s, 10, new Map([[s.shop.shop.id, 3]]), 4);
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({ event: 'created.subscription', attempts: 1 });
    expect((await eventRow(s, one[0]?.id ?? 0))?.leased_until).not.toBeNull();
    // Its slots are free: the two other subscriptions' `created`, never an `activated` behind a pending one.
    const rest = await claim(s, 10);
    expect(rest.map((r) => r.event)).toEqual(['created.subscription', 'created.subscription']);
    expect(await claim(s, 10)).toEqual([]);
  });
});

describe('outcomes written in groups', () => {
  it('records every attempt and each event’s own new state, in one write for outcomes that finish together', async () => {
    const s = await notifyShop();
    await subscriptions(s, 'http://127.0.0.1:9/hook', 3);
    const rows = await claim(s, 10);
    expect(rows).toHaveLength(3);
    const [a, b, c] = rows as [DueRow, DueRow, DueRow];
    const at = s.h.clock.now();
    const retryAt = new Date(at.getTime() + 10_000);
    const writer = new OutcomeWriter(s.h.db);
    const outcomes: [DueRow, number | null, Next][] = [
      [a, 200, { kind: 'delivered' }],
      [b, 500, { kind: 'retry', at: retryAt }],
      [c, null, { kind: 'failed' }],
    ];
    await Promise.all(outcomes.map(([row, code, next]) => writer.record(recordOf(row, at, code), next)));
    expect(writer.stats).toEqual({ writes: 1, outcomes: 3 });

    expect(await eventRow(s, a.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      leased_until: null,
      next_attempt_at: null,
    });
    expect(await eventRow(s, b.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      leased_until: null,
      next_attempt_at: retryAt,
    });
    expect(await eventRow(s, c.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      leased_until: null,
      next_attempt_at: null,
    });
    expect(await attemptRows(s, a.id)).toEqual([
      { n: 1, status_code: 200, response: 'answer 200', error: null },
    ]);
    expect(await attemptRows(s, b.id)).toEqual([
      { n: 1, status_code: 500, response: 'answer 500', error: null },
    ]);
    expect(await attemptRows(s, c.id)).toEqual([
      { n: 1, status_code: null, response: null, error: 'ECONNRESET: socket hang up' },
    ]);

    // A late outcome of an older attempt (its lease ran out and another took it) is recorded but
    // changes nothing: the event is the newer attempt's.
    await s.subscribe('http://127.0.0.1:9/hook');
    const [d] = (await claim(s, 10)).filter((r) => r.event === 'created.subscription') as [DueRow];
    await withClock(s.h, LEASE_MS + 1000, async () => {
      const again = (await claim(s, 10)).find((r) => r.id === d.id);
      expect(again).toMatchObject({ attempts: 2 });
      await writer.record(recordOf(d, at, 500), { kind: 'retry', at: retryAt });
      expect(await eventRow(s, d.id)).toMatchObject({ status: 'pending', attempts: 2 });
      expect((await eventRow(s, d.id))?.leased_until).not.toBeNull();
      await writer.record(recordOf(again as DueRow, s.h.clock.now(), 200), { kind: 'delivered' });
    });
    expect(await eventRow(s, d.id)).toMatchObject({ status: 'delivered', attempts: 2, leased_until: null });
    expect((await attemptRows(s, d.id)).map((r) => [r.n, r.status_code])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  });

  it('tries each outcome of a group that fails alone, so one bad row costs only itself', async () => {
    const s = await notifyShop();
    await subscriptions(s, 'http://127.0.0.1:9/hook', 2);
    const [a, b] = (await claim(s, 10)) as [DueRow, DueRow];
    const at = s.h.clock.now();
    let failNext = true;
    const flaky: Pick<Db, 'batch'> = {
      batch: (statements) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('the group failed'));
        }
        return s.h.db.batch(statements);
      },
    };
    const writer = new OutcomeWriter(flaky);
    await Promise.all([
      writer.record(recordOf(a, at, 200), { kind: 'delivered' }),
      writer.record(recordOf(b, at, 204), { kind: 'delivered' }),
    ]);
    expect(writer.stats).toEqual({ writes: 2, outcomes: 2 });
    expect(await eventRow(s, a.id)).toMatchObject({ status: 'delivered' });
    expect(await eventRow(s, b.id)).toMatchObject({ status: 'delivered' });
  });

  it('leaves the notifications of a group that never commits pending, and sends them again after the lease', async () => {
    rx = await startReceiver();
    const s = await notifyShop();
    const subs = await subscriptions(s, rx.url, 3);
    // The store goes away as the outcomes are written (the claims still get through): as if the
    // process died before the commit.
    const recordsOutcome = (statements: readonly Statement[]) =>
      statements.some((st) => st.sql.trimStart().startsWith('INSERT INTO event_attempts'));
    const dead = {
      ...s.h.app.services,
      db: {
        ...s.h.db,
        batch: <R>(statements: readonly Statement[]) =>
          recordsOutcome(statements)
            ? Promise.reject(new Error('connection lost'))
            : s.h.db.batch<R>(statements),
      },
    };
    await deliverDue(dead, { shopId: s.shop.shop.id });
    expect(rx.received.map((r) => r.json.event)).toEqual(Array(3).fill('created.subscription'));
    const pending = await s.h.db.query<{ id: number; attempts: number; leased_until: Date | null }>(
      `SELECT event_id AS id, attempts, leased_until FROM deliveries
       WHERE shop_id = $1 AND status = 'pending' ORDER BY event_id`,
      [s.shop.shop.id],
    );
    expect(pending).toHaveLength(6);
    const sent = pending.filter((e) => e.attempts === 1);
    expect(sent).toHaveLength(3);
    for (const e of sent) expect(e.leased_until).not.toBeNull();

    // Held while the lease lasts, then sent again: the lost attempt is on record, nothing is lost.
    expect(await s.deliver()).toMatchObject({ attempts: 0 });
    await withClock(s.h, LEASE_MS + 1000, async () => {
      expect(await s.deliver()).toMatchObject({ attempts: 6, delivered: 6 });
    });
    for (const e of sent)
      expect((await attemptRows(s, e.id)).map((r) => [r.n, r.status_code, r.error])).toEqual([
        [1, null, 'no answer recorded: the process sending it stopped'],
        [2, 200, null],
      ]);
    const bySub = new Map<string, string[]>();
    for (const r of rx.received)
      bySub.set(String(r.json.id), [...(bySub.get(String(r.json.id)) ?? []), String(r.json.event)]);
    for (const sub of subs)
      expect(bySub.get(sub)).toEqual([
        'created.subscription',
        'created.subscription',
        'activated.subscription',
      ]);
  });
});
