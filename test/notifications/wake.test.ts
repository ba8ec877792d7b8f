import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { holdTransaction } from '../../src/db/held.js';
import { type Announcement, eventInsert, eventsInsert } from '../../src/notifications/outbox.js';
import { DeliveryWake, wakingStore } from '../../src/notifications/wake.js';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  seededDataDir,
  start,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { harness } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

/**
 * A notification written by this process is sent at once, not at the deliverer's next look: the
 * store tells the deliverer after each commit that made a delivery due.
 */

const dirs: string[] = [];
let rx: Receiver | undefined;
afterAll(async () => {
  cleanUp();
  await rx?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the store seen through a DeliveryWake', () => {
  it('wakes after a commit that made a delivery due, never for a rollback or other writes', async () => {
    const h = await harness();
    const wake = new DeliveryWake();
    let woken = 0;
    const stop = wake.on(() => {
      woken++;
    });
    const db = wakingStore(h.db, wake);
    // Statements marked as the outbox's and a resend's are, and change nothing.
    const due = { sql: 'SELECT 1 AS n', wakes: true };
    const resend = { sql: 'SELECT $1::int AS n', params: [1], wakes: true };

    await db.query('SELECT 1');
    await db.batch([{ sql: 'SELECT 1' }]);
    await db.tx((tx) => tx.query('SELECT 1'));
    // The words of the outbox and of a resend wake nobody: only the writers' mark does.
    await db.query('/* INSERT INTO deliveries */ SELECT 1 AS n');
    await db.batch([{ sql: "/* UPDATE deliveries SET status = 'pending' */ SELECT 1 AS n" }]);
    await db.query({ sql: 'SELECT 1', wakes: false });
    expect(woken).toBe(0);

    await db.query(due);
    expect(woken).toBe(1);
    await db.batch([{ sql: 'SELECT 2' }, resend]);
    expect(woken).toBe(2);
    // One wake per transaction, after it commits: none while it runs.
    await db.tx(async (tx) => {
      await tx.query(due);
      await tx.batch([due]);
      expect(woken).toBe(2);
    });
    expect(woken).toBe(3);
    await db.tx((tx) => tx.batch([{ sql: 'SELECT 1' }, resend]));
    expect(woken).toBe(4);
    // A transaction that rolls back wakes nobody.
    await expect(
      db.tx(async (tx) => {
        await tx.query(due);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(woken).toBe(4);
    stop();
    await db.query(due);
    expect(woken).toBe(4);
  });

  it('wakes for a batch written inside a transaction held across a request, once it commits', async () => {
    const h = await harness();
    const wake = new DeliveryWake();
    let woken = 0;
    const stop = wake.on(() => {
      woken++;
    });
    const held = await holdTransaction(wakingStore(h.db, wake));
    await held.db.batch([{ sql: 'SELECT 1' }, { sql: 'SELECT 2 AS n', wakes: true }]);
    expect(woken).toBe(0);
    await held.end(true);
    expect(woken).toBe(1);
    stop();
  });

  it('is told by the outbox only of events delivered over HTTP', async () => {
    const event = (url: string | null): Announcement => ({
      shopId: 1,
      resourceType: 'subscription',
      resourceId: 'sub_1',
      event: 'created.subscription',
      payload: {},
      url,
      now: new Date('2026-01-01T00:00:00Z'),
    });
    expect(eventInsert(event('http://127.0.0.1:9/hook')).wakes).toBe(true);
    expect(eventInsert(event(null)).wakes).toBe(false);
    expect(eventsInsert([event(null), event('http://127.0.0.1:9/hook')]).wakes).toBe(true);
    expect(eventsInsert([event(null)]).wakes).toBe(false);
  });
});

describe('kopek serve', () => {
  it('sends a new notification and a resend at once, whatever NOTIFY_INTERVAL_MS says', {
    ...EMBEDDED_ONLY,
    timeout: 60_000,
  }, async () => {
    // Each arrival settles a waiter: the test waits on deliveries, never on the wall clock.
    const waiters = new Map<number, () => void>();
    const arrival = (n: number) => new Promise<void>((resolve) => waiters.set(n, resolve));
    const second = arrival(2);
    rx = await startReceiver((i) => {
      waiters.get(i + 1)?.();
      return { status: 200 };
    });
    const dataDir = await seededDataDir('kopek-wake-');
    dirs.push(dataDir);
    const port = await freePort();
    // An hour between looks: only the wake can send it within the test.
    const env = { ...embeddedEnv(dataDir, port), NOTIFY_INTERVAL_MS: '3600000', BILLING: 'off' };
    const s = start(process.execPath, [...KOPEK, 'serve'], env);
    await waitForBanner(s);
    const shopId = /Shop id:\s+(\d+)/.exec(s.output())?.[1];
    const secret = /Secret key:\s+([0-9a-f]{64})/.exec(s.output())?.[1];
    const auth = `Basic ${Buffer.from(`${shopId}:${secret}`).toString('base64')}`;
    const api = (path: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const res = await api('/subscriptions', cardBody({ notification_url: rx.url }));
    expect(res.status).toBe(201);
    const sub = ((await res.json()) as { id: string }).id;
    // With an hour between the deliverer's looks, only the wake can send these within the test.
    await second;
    expect(rx.received.map((r) => r.json.event)).toEqual(['created.subscription', 'activated.subscription']);

    const list = (await (await api(`/notifications?resource_id=${sub}`)).json()) as { id: string }[];
    const created = list.at(-1)?.id as string;
    const third = arrival(3);
    const resent = await api(`/notifications/${created}/resend`, {});
    expect(resent.status).toBe(200);
    await third;
    expect(rx.received[2]?.headers['kopek-event-id']).toBe(created);
  });
});
