import { beforeAll, describe, expect, it } from 'vitest';
import { PROOF_RECEIVED } from '../../src/proofs/service.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { parentPayment, pdf, png, proofBody, proofUrl } from './files.js';

/** A received proof is announced in the transaction that stores it, with the endpoint's own answer. */

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const HOOK = 'https://shop.example/hooks/proofs';

interface EventRow {
  shop_id: number;
  resource_type: string;
  resource_id: string;
  event: string;
  payload: Record<string, unknown>;
  url: string | null;
  status: string;
  created_at: Date;
  next_attempt_at: Date | null;
}

const eventsOf = (resourceId: string) =>
  h.db.query<EventRow>(
    `SELECT e.shop_id, e.resource_type, e.resource_id, e.event, e.payload, e.url,
       coalesce(d.status, 'none') AS status, e.created_at, d.next_attempt_at
     FROM events e LEFT JOIN deliveries d ON d.event_id = e.id WHERE e.resource_id = $1 ORDER BY e.id`,
    [resourceId],
  );

const eventsOfShop = async (s: TestShop) =>
  (await h.db.query<{ id: string }>('SELECT id FROM events WHERE shop_id = $1', [s.shop.id])).map(
    (r) => r.id,
  );

describe('payment proof: the received.proof event', () => {
  it("announces the proof with the endpoint's answer, for the parent's notification_url", async () => {
    const parent = await parentPayment(h, shop, { notification_url: HOOK });
    const res = await api.post(proofUrl(parent), proofBody(pdf('announced')));
    expect(res.status).toBe(200);
    const rows = await eventsOf(res.body.transaction.uid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual({
      shop_id: shop.shop.id,
      resource_type: 'proof',
      resource_id: res.body.transaction.uid,
      event: 'received.proof',
      payload: { ...res.body, event: 'received.proof' },
      url: HOOK,
      status: 'pending',
      created_at: h.clock.now(),
      next_attempt_at: h.clock.now(),
    });
    expect(PROOF_RECEIVED).toBe('received.proof');
    // Nothing is announced about the parent itself: the proof changes nothing of it.
    expect(await eventsOf(parent)).toEqual([]);
  });

  it('keeps the event for the record when the parent has no notification_url, mismatches included', async () => {
    const parent = await parentPayment(h, shop);
    const res = await api.post(proofUrl(parent, 'beyag'), proofBody(png(3, 3, 7), { amount: 1000 }));
    expect(res.body.transaction.proof.status).toBe('failed');
    const [row] = await eventsOf(res.body.transaction.uid);
    expect(row).toMatchObject({
      event: 'received.proof',
      payload: { ...res.body, event: 'received.proof' },
      url: null,
      status: 'none',
      next_attempt_at: null,
    });
  });

  it('announces each accepted proof once; a refused duplicate announces nothing', async () => {
    const parent = await parentPayment(h, shop, { notification_url: HOOK });
    const first = await api.post(proofUrl(parent), proofBody(pdf('first')));
    const refused = await api.post(proofUrl(parent), proofBody(pdf('second')));
    expect(refused.status).toBe(422);
    const second = await api.post(proofUrl(parent), proofBody(pdf('third'), { skip_duplicate_check: true }));
    expect(second.status).toBe(200);
    for (const res of [first, second]) {
      expect((await eventsOf(res.body.transaction.uid)).map((r) => r.payload)).toEqual([
        { ...res.body, event: 'received.proof' },
      ]);
    }
    const [n] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE resource_type = 'proof' AND payload -> 'transaction' ->> 'parent_uid' = $1`,
      [parent],
    );
    expect(n?.n).toBe(2);
  });

  it('announces nothing for invalid input', async () => {
    const mine = await newShop(h);
    const parent = await parentPayment(h, mine, { notification_url: HOOK });
    const res = await client(h, mine).post(proofUrl(parent), proofBody(pdf(), { currency: 'NOPE' }));
    expect(res.status).toBe(422);
    expect(await eventsOfShop(mine)).toEqual([]);
  });

  it("another shop's transaction: 404 and no event for either shop", async () => {
    const owner = await newShop(h);
    const parent = await parentPayment(h, owner, { notification_url: HOOK });
    const other = await newShop(h);
    const res = await client(h, other).post(proofUrl(parent), proofBody(pdf('foreign')));
    expect(res.status).toBe(404);
    expect(await eventsOfShop(owner)).toEqual([]);
    expect(await eventsOfShop(other)).toEqual([]);
  });
});
