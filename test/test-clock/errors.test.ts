import { beforeAll, describe, expect, it } from 'vitest';
import { type Harness, harness } from '../harness.js';
import { advance, frozen, REAL_NOW, setup, subscribe } from './support.js';

/** What the test clock refuses, and whom it answers. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

describe('POST /test_clock/advance refuses', () => {
  it('going back or standing still, naming the field, and leaves the clock as it was', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await advance(s, { to: '2026-02-01T00:00:00Z' });
      const forward = "must move the clock forward: the shop's clock already shows 2026-02-01T00:00:00.000Z";
      for (const [body, field] of [
        [{ to: '2026-01-15T00:00:00Z' }, 'to'],
        [{ to: '2026-02-01T00:00:00Z' }, 'to'],
        [{ by: '-P1D' }, 'by'],
        [{ by: 'PT0S' }, 'by'],
      ] as const) {
        const res = await s.api.post('/test_clock/advance', body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body).toEqual({
          message: `${field === 'to' ? 'To' : 'By'} ${forward}`,
          errors: { [field]: [forward] },
        });
      }
      expect((await s.api.get('/test_clock')).body.test_clock.now).toBe('2026-02-01T00:00:00.000Z');
    }));

  it('both or neither of to and by, and text that is neither an instant nor a duration', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const oneOf = 'Give exactly one of to (an ISO 8601 instant) or by (an ISO 8601 duration such as P1M)';
      for (const body of [{}, { to: '2027-01-01T00:00:00Z', by: 'P1D' }, { to: null, by: null }]) {
        const res = await s.api.post('/test_clock/advance', body);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ message: oneOf, errors: { base: [oneOf] } });
      }
      const cases: [Record<string, unknown>, string, string][] = [
        [{ to: 'next tuesday' }, 'to', 'must be an ISO 8601 date and time such as 2027-01-31T10:00:00Z'],
        [
          { to: '2027-02-30T00:00:00Z' },
          'to',
          'must be an ISO 8601 date and time such as 2027-01-31T10:00:00Z',
        ],
        [{ to: 20270101 }, 'to', 'must be an ISO 8601 date and time such as 2027-01-31T10:00:00Z'],
        [{ by: 'one month' }, 'by', 'must be an ISO 8601 duration such as P1M, P1Y or PT36H'],
        [{ by: ['P1M'] }, 'by', 'must be an ISO 8601 duration such as P1M, P1Y or PT36H'],
        [{ by: 'P1.5M' }, 'by', 'may have a fraction in its seconds only'],
        [{ by: 'P99999Y' }, 'by', 'must stay within the year 9999'],
        [{ to: '+010000-01-01T00:00:00Z' }, 'to', 'must stay within the year 9999'],
      ];
      for (const [body, field, message] of cases) {
        const res = await s.api.post('/test_clock/advance', body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.errors, JSON.stringify(body)).toEqual({ [field]: [message] });
      }
      expect((await s.api.get('/test_clock')).body.test_clock).toEqual({
        now: REAL_NOW,
        offset_seconds: 0,
        time_zone: 'UTC',
      });
    }));
});

describe('the test clock and its callers', () => {
  it('is not there for a live shop: 404 on both routes, in the contract shape', async () => {
    const live = await setup(h, { test: false });
    const message = 'Record not found: only test shops have a test clock';
    for (const res of [
      await live.api.get('/test_clock'),
      await live.api.post('/test_clock/advance', { by: 'P1D' }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message, errors: { base: [message] } });
    }
  });

  it('asks for credentials: 401 without them or with a wrong key', async () => {
    const s = await setup(h);
    const wrong = `Basic ${Buffer.from(`${s.shop.shop.id}:${'0'.repeat(64)}`).toString('base64')}`;
    for (const auth of [{}, { authorization: wrong }]) {
      const get = await h.app.inject({ method: 'GET', url: '/test_clock', headers: auth });
      const post = await h.app.inject({
        method: 'POST',
        url: '/test_clock/advance',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{"by":"P1Y"}',
      });
      for (const res of [get, post]) {
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
      }
    }
    expect((await s.api.get('/test_clock')).body.test_clock.offset_seconds).toBe(0);
  });

  it("moves one shop's clock only: another shop's time and subscriptions stay as they were", () =>
    frozen(h, async () => {
      const mover = await setup(h);
      const other = await setup(h);
      const theirs = await subscribe(other);
      const ours = await subscribe(mover);
      const done = await advance(mover, { by: 'P3M' });
      expect(done.billing.successful).toBe(3);
      expect((await other.api.get('/test_clock')).body.test_clock).toMatchObject({
        now: REAL_NOW,
        offset_seconds: 0,
      });
      expect((await other.api.get(`/subscriptions/${theirs.id}`)).body).toMatchObject({
        paid_billing_cycles: 1,
        renew_at: theirs.renew_at,
      });
      // The other shop cannot read or change the mover's subscription through its own clock either.
      expect((await other.api.get(`/subscriptions/${ours.id}`)).status).toBe(404);
      expect((await mover.api.get(`/subscriptions/${ours.id}`)).body.paid_billing_cycles).toBe(4);
    }));
});
