import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  kopek,
  type Started,
  start,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { card, monthly } from './support.js';

/**
 * `kopek clock` and `kopek shop update` with the real CLI on its own embedded store (no
 * DATABASE_URL): first alone, then through a running server, which must see each change at once.
 */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-clock-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('kopek clock and shop update alone', { timeout: 180_000, ...EMBEDDED_ONLY }, () => {
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    env = embeddedEnv(tempDir());
  });

  it('advances a test shop with nothing due, refuses going back, a live shop and bad input', async () => {
    const created = await kopek(env, 'shop', 'create', '--id', '7', '--test');
    expect(created.code, created.output).toBe(0);
    const advanced = await kopek(env, 'clock', 'advance', '--shop', '7', '--by', 'P1D');
    expect(advanced.code, advanced.output).toBe(0);
    expect(advanced.output).toMatch(/^Shop 7 test clock: \S+Z \(time zone UTC\), 1 day ahead of real time$/m);
    expect(advanced.output).toContain('Billed in 0 runs: 0 charge attempts (0 successful, 0 failed');

    const back = await kopek(env, 'clock', 'advance', '--shop', '7', '--to', '2020-01-01T00:00:00Z');
    expect(back.code).toBe(1);
    expect(back.output).toMatch(/--to must move the clock forward: the shop's clock already shows /);
    expect(back.output).not.toMatch(/\n\s+at /);

    const both = await kopek(env, 'clock', 'advance', '--shop', '7', '--by', 'P1D', '--to', '2030-01-01');
    expect(both.code).toBe(1);
    expect(both.output).toContain('exactly one of --by DURATION and --to INSTANT');

    expect((await kopek(env, 'shop', 'create', '--id', '8')).code).toBe(0);
    const live = await kopek(env, 'clock', 'show', '--shop', '8');
    expect(live.code).toBe(1);
    expect(live.output).toContain('shop 8 is not a test shop (or does not exist)');

    const zone = await kopek(env, 'shop', 'update', '8', '--time-zone', 'Mars/Olympus', '--3ds', 'maybe');
    expect(zone.code).toBe(1);
    expect(zone.output).toContain('--3ds must be on or off');
    const badZone = await kopek(env, 'shop', 'update', '8', '--time-zone', 'Mars/Olympus');
    expect(badZone.code).toBe(1);
    expect(badZone.output).toContain('--time-zone is not an IANA time zone');
    const unknown = await kopek(env, 'shop', 'update', '99', '--3ds', 'on');
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain('no shop with id 99');
  });
});

describe('kopek clock and shop update through a running server', {
  timeout: 180_000,
  ...EMBEDDED_ONLY,
}, () => {
  let env: NodeJS.ProcessEnv;
  let server: Started;
  let base: string;
  let auth: string;

  beforeAll(async () => {
    const port = await freePort();
    env = embeddedEnv(tempDir(), port);
    base = `http://127.0.0.1:${port}`;
    server = start(process.execPath, [...KOPEK, 'serve'], env);
    await waitForBanner(server);
    // The sandbox shop of the first start is a test shop: id 1, its key in the banner.
    const secret = server.output().match(/Secret key:\s+([0-9a-f]{64})/)?.[1];
    expect(secret, server.output()).toBeDefined();
    auth = `Basic ${Buffer.from(`1:${secret}`).toString('base64')}`;
  }, 120_000);

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('clock advance bills what falls due and prints a summary; the server sees the new time at once', async () => {
    const sub = await api('POST', '/subscriptions', {
      plan: monthly(),
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      card: card(),
    });
    expect(sub.status).toBe(201);
    const run = await kopek(env, 'clock', 'advance', '--shop', '1', '--by', 'P2M');
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/^Advanced from \S+Z$/m);
    expect(run.output).toMatch(/^Shop 1 test clock: \S+Z \(time zone UTC\), \d+ days .*ahead of real time$/m);
    expect(run.output).toContain(
      'Billed in 2 runs: 2 charge attempts (2 successful, 0 failed, 0 error, 0 unknown); 0 open attempts resolved; 0 subscriptions ended after their last cycle.',
    );
    expect((await api('GET', `/subscriptions/${sub.body.id}`)).body.paid_billing_cycles).toBe(3);

    const shown = await kopek(env, 'clock', 'show', '--shop', '1');
    expect(shown.code, shown.output).toBe(0);
    const now = shown.output.match(/test clock: (\S+Z)/)?.[1] as string;
    const clock = (await api('GET', '/test_clock')).body.test_clock;
    expect(Math.abs(Date.parse(clock.now) - Date.parse(now))).toBeLessThan(60_000);
    // A subscription created right after is on the shop's time: two months from now in real time.
    const later = await api('POST', '/subscriptions', {
      plan: monthly(),
      customer: { email: 'joe@example.com', ip: '203.0.113.8' },
      card: card(),
    });
    expect(Date.parse(later.body.created_at) - Date.parse(sub.body.created_at)).toBeGreaterThan(
      58 * 86_400_000,
    );
  });

  it('shop update changes the settings, prints them, and the server applies them to the next request', async () => {
    const run = await kopek(
      env,
      'shop',
      'update',
      '1',
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
    expect(run.output).toMatch(/^Shop 1 \(test\): Sandbox shop$/m);
    expect(run.output).toMatch(/^ {2}3-D Secure: +on$/m);
    expect(run.output).toMatch(/^ {2}Time zone: +Europe\/Minsk$/m);
    expect(run.output).toMatch(/^ {2}Notification e-mail: +billing@shop\.example$/m);
    const settings = (await api('GET', '/shop')).body;
    expect(settings).toMatchObject({
      three_d_secure: true,
      email_notifications: true,
      notification_email: 'billing@shop.example',
      return_url: 'https://shop.example/back',
      time_zone: 'Europe/Minsk',
    });
    // The server's cached shop was forgotten: its next subscription goes through 3-D Secure.
    const sub = await api('POST', '/subscriptions', {
      plan: monthly(),
      customer: { email: 'ann@example.com', ip: '203.0.113.9' },
      card: card('4012000000001097'),
    });
    expect(sub.body.state).toBe('redirecting');
    const cleared = await kopek(env, 'shop', 'update', '1', '--return-url', 'none', '--3ds', 'off');
    expect(cleared.code, cleared.output).toBe(0);
    expect(cleared.output).toMatch(/^ {2}Return URL: +none$/m);
    expect((await api('GET', '/shop')).body).toMatchObject({ return_url: null, three_d_secure: false });
  });
});
