import { randomInt } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessCli } from '../cli/run-cli.js';
import { client, type Harness, harness, newShop } from '../harness.js';
import { card, monthly } from './support.js';

/**
 * `kopek clock` and `kopek shop update`, run in this process on the worker's store and app as a
 * server holding the store runs them: the app must see each change on its next request. (That the
 * CLI reaches a running server's store through its control socket is test/foundation/embedded-store.)
 */

let h: Harness;
let kopek: ReturnType<typeof harnessCli>;
beforeAll(async () => {
  h = await harness();
  kopek = harnessCli(h);
});

// Chosen ids, far from the ones other files' shops get from the sequence.
const shopId = () => randomInt(1_000_000, 2_000_000_000);

describe('kopek clock and shop update', () => {
  it('advances a test shop with nothing due, refuses going back, a live shop and bad input', async () => {
    const test = String(shopId());
    const created = await kopek('shop', 'create', '--id', test, '--test');
    expect(created.code, created.output).toBe(0);
    const advanced = await kopek('clock', 'advance', '--shop', test, '--by', 'P1D');
    expect(advanced.code, advanced.output).toBe(0);
    expect(advanced.stdout).toMatch(
      new RegExp(`^Shop ${test} test clock: \\S+Z \\(time zone UTC\\), 1 day ahead of real time$`, 'm'),
    );
    expect(advanced.stdout).toContain('Billed in 0 runs: 0 charge attempts (0 successful, 0 failed');

    const back = await kopek('clock', 'advance', '--shop', test, '--to', '2020-01-01T00:00:00Z');
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(/--to must move the clock forward: the shop's clock already shows /);
    expect(back.stderr).not.toMatch(/\n\s+at /);

    const both = await kopek('clock', 'advance', '--shop', test, '--by', 'P1D', '--to', '2030-01-01');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('exactly one of --by DURATION and --to INSTANT');

    const live = String(shopId());
    expect((await kopek('shop', 'create', '--id', live)).code).toBe(0);
    const shown = await kopek('clock', 'show', '--shop', live);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain(`shop ${live} is not a test shop (or does not exist)`);

    const zone = await kopek('shop', 'update', live, '--time-zone', 'Mars/Olympus', '--3ds', 'maybe');
    expect(zone.code).toBe(1);
    expect(zone.stderr).toContain('--3ds must be on or off');
    const badZone = await kopek('shop', 'update', live, '--time-zone', 'Mars/Olympus');
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toContain('--time-zone is not an IANA time zone');
    const missing = String(shopId());
    const unknown = await kopek('shop', 'update', missing, '--3ds', 'on');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`no shop with id ${missing}`);
  });

  it('clock advance bills what falls due and prints a summary; the app sees the new time at once', async () => {
    const shop = await newShop(h);
    const id = String(shop.shop.id);
    const api = client(h, shop);
    const sub = await api.post('/subscriptions', {
      plan: monthly(),
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      card: card(),
    });
    expect(sub.status).toBe(201);
    const run = await kopek('clock', 'advance', '--shop', id, '--by', 'P2M');
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(/^Advanced from \S+Z$/m);
    expect(run.stdout).toMatch(
      new RegExp(`^Shop ${id} test clock: \\S+Z \\(time zone UTC\\), \\d+ days .*ahead of real time$`, 'm'),
    );
    expect(run.stdout).toContain(
      'Billed in 2 runs: 2 charge attempts (2 successful, 0 failed, 0 error, 0 unknown); 0 open attempts resolved; 0 subscriptions ended after their last cycle.',
    );
    expect((await api.get(`/subscriptions/${sub.body.id}`)).body.paid_billing_cycles).toBe(3);

    const shown = await kopek('clock', 'show', '--shop', id);
    expect(shown.code, shown.output).toBe(0);
    const now = shown.stdout.match(/test clock: (\S+Z)/)?.[1] as string;
    const clock = (await api.get('/test_clock')).body.test_clock;
    expect(Math.abs(Date.parse(clock.now) - Date.parse(now))).toBeLessThan(60_000);
    // A subscription created right after is on the shop's time: two months from now in real time.
    const later = await api.post('/subscriptions', {
      plan: monthly(),
      customer: { email: 'joe@example.com', ip: '203.0.113.8' },
      card: card(),
    });
    expect(Date.parse(later.body.created_at) - Date.parse(sub.body.created_at)).toBeGreaterThan(
      58 * 86_400_000,
    );
  });

  it('shop update changes the settings, prints them, and the app applies them to the next request', async () => {
    const shop = await newShop(h);
    const id = String(shop.shop.id);
    const api = client(h, shop);
    // The app knows the shop before the change: it must not go on with what it knew.
    expect((await api.get('/shop')).body.three_d_secure).toBe(false);
    const run = await kopek(
      'shop',
      'update',
      id,
      '--time-zone',
      'Europe/Minsk',
      '--email-notifications',
      'on',
      '--notification-email',
      'billing@shop.example',
      '--return-url',
      'https://shop.example/back',
      '--3ds',
      'on',
    );
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Shop ${id} \\(test\\): Test shop$`, 'm'));
    expect(run.stdout).toMatch(/^ {2}3-D Secure: +on$/m);
    expect(run.stdout).toMatch(/^ {2}Time zone: +Europe\/Minsk$/m);
    expect(run.stdout).toMatch(/^ {2}Notification e-mail: +billing@shop\.example$/m);
    const settings = (await api.get('/shop')).body;
    expect(settings).toMatchObject({
      three_d_secure: true,
      email_notifications: true,
      notification_email: 'billing@shop.example',
      return_url: 'https://shop.example/back',
      time_zone: 'Europe/Minsk',
    });
    // The app's cached shop was forgotten: its next subscription goes through 3-D Secure.
    const sub = await api.post('/subscriptions', {
      plan: monthly(),
      customer: { email: 'ann@example.com', ip: '203.0.113.9' },
      card: card('4012000000001097'),
    });
    expect(sub.body.state).toBe('redirecting');
    const cleared = await kopek('shop', 'update', id, '--return-url', 'none', '--3ds', 'off');
    expect(cleared.code, cleared.output).toBe(0);
    expect(cleared.stdout).toMatch(/^ {2}Return URL: +none$/m);
    expect((await api.get('/shop')).body).toMatchObject({ return_url: null, three_d_secure: false });
  });
});
