import { randomInt } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { storeCommands } from '../../src/control/commands.js';
import { headersFor } from '../../src/notifications/attempt.js';
import { findShopRow, type ShopRow } from '../../src/shops/repository.js';
import { harnessCli } from '../cli/run-cli.js';
import { client, harness } from '../harness.js';
import { dueRowOf, type NotifyShop, notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * Notifications to https URLs carry HTTP Basic with the shop's secret key, which Kopek keeps sealed
 * from now on; `kopek shop rotate-key` gives a shop created before that a new key, and with it Basic.
 * Plain http:// never carries it. Neither the secret nor the signing key ever reaches the log.
 */

let rx: Receiver;
afterAll(async () => {
  await rx?.close();
});

const basicOf = (shopId: number, secret: string) =>
  `Basic ${Buffer.from(`${shopId}:${secret}`).toString('base64')}`;

/** The Authorization header a notification of the shop to an https URL goes with now. */
async function httpsAuthorization(s: NotifyShop): Promise<string | undefined> {
  const row = (await findShopRow(s.h.db, s.shop.shop.id)) as ShopRow;
  const due = dueRowOf(row, 'https://shop.example/hook');
  const sent = await headersFor(
    s.h.app.services,
    due,
    '{}',
    s.h.clock.now(),
    row.webhook_secret_enc as string,
  );
  return sent.headers.authorization;
}

describe('the shop secret on notifications', () => {
  it('a shop without a sealed key is notified without Basic until its key is rotated', async () => {
    rx = await startReceiver();
    const s = await notifyShop();
    const id = s.shop.shop.id;
    // As a shop created before Kopek kept its key sealed.
    await s.h.db.query('UPDATE shops SET secret_enc = NULL WHERE id = $1', [id]);
    expect(await httpsAuthorization(s)).toBeUndefined();
    await s.subscribe(rx.url);
    await s.deliver();
    expect(rx.received).toHaveLength(2);
    for (const r of rx.received) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['content-signature']).toEqual(expect.any(String));
    }

    const deps = {
      db: s.h.db,
      clock: s.h.clock,
      masterKey: s.h.masterKey,
      publicUrl: s.h.config.publicUrl,
      config: s.h.config,
      log: s.h.app.log,
      forgetShop: (shop: number) => s.h.app.shopAuthenticator.forget(shop),
    };
    const rotate = storeCommands['shop rotate-key'];
    await expect(rotate.run(deps, { shop: 2_000_000_000 })).rejects.toThrow('no shop with id 2000000000');
    const rotated = await rotate.run(deps, { shop: id });
    expect(rotated.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.secret).not.toBe(s.shop.secret);
    // The old key no longer opens the API; the new one does, at once.
    expect((await s.api.get('/shop')).status).toBe(401);
    const api = client(s.h, { ...s.shop, auth: basicOf(id, rotated.secret) });
    expect((await api.get('/shop')).status).toBe(200);

    const sub = await api.post('/subscriptions', {
      plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      card: {
        number: '4200000000000000',
        verification_value: '123',
        holder: 'JANE DOE',
        exp_month: '12',
        exp_year: '2030',
      },
      notification_url: rx.url,
    });
    expect(sub.status).toBe(201);
    await s.deliver();
    const latest = rx.received.slice(2);
    expect(latest).toHaveLength(2);
    // Not over plain http://; over https, the new key.
    for (const r of latest) expect(r.headers.authorization).toBeUndefined();
    expect(await httpsAuthorization(s)).toBe(basicOf(id, rotated.secret));

    const logs = s.h.logs.join('\n');
    expect(logs).toContain('notification attempt');
    expect(logs).not.toContain(rotated.secret);
    expect(logs).not.toContain(s.shop.secret);
    expect(logs).not.toContain('PRIVATE KEY');
    expect(logs).not.toContain(rx.url);
  });

  it('kopek shop rotate-key N prints the new key once', async () => {
    const kopek = harnessCli(await harness());
    // A chosen id, far from the ones other files' shops get from the sequence.
    const id = String(randomInt(1_000_000, 2_000_000_000));
    const created = await kopek('shop', 'create', '--id', id, '--test');
    expect(created.code, created.output).toBe(0);
    const rotated = await kopek('shop', 'rotate-key', id);
    expect(rotated.code, rotated.output).toBe(0);
    const secret = /Secret key:\s+([0-9a-f]{64})/.exec(rotated.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(created.output).not.toContain(secret as string);
    expect(rotated.stdout).toContain('the old key no longer works');
    const usage = await kopek('shop', 'rotate-key');
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('shop rotate-key N');
  });
});
