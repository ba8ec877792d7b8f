import { randomInt } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type StoreDeps, storeCommands } from '../../src/control/commands.js';
import { harnessCli } from '../cli/run-cli.js';
import { client, type Harness, harness, newShop } from '../harness.js';

/** `kopek shop update --notification-auth` and the notification key commands. */

let h: Harness;
let deps: StoreDeps;
beforeAll(async () => {
  h = await harness();
  deps = {
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    publicUrl: h.config.publicUrl,
    config: h.config,
    log: h.app.log,
    forgetShop: (shop: number) => h.app.shopAuthenticator.forget(shop),
  };
});

describe('notification keys from the command line', () => {
  it('the store commands change what GET /shop shows, and explain a mistake', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const id = shop.shop.id;
    const update = storeCommands['shop update'];
    expect(
      (await update.run(deps, { shop: id, settings: { notification_auth: 'signature' } })).notification_auth,
    ).toBe('signature');
    expect((await api.get('/shop')).body.notification_auth).toBe('signature');
    await expect(update.run(deps, { shop: id, settings: { notification_auth: 'open' } })).rejects.toThrow(
      '--notification-auth must be one of: basic, signature',
    );

    const secret = (await api.get('/shop')).body.webhook_secret;
    const rotated = await storeCommands['shop rotate-webhook-secret'].run(deps, { shop: id });
    expect(rotated.webhook_secret).not.toBe(secret);
    expect((await api.get('/shop')).body.webhook_secret).toBe(rotated.webhook_secret);

    const confirm = storeCommands['shop confirm-signing-key'];
    await expect(confirm.run(deps, { shop: id })).rejects.toThrow(
      "A pending signing key can't be confirmed: there is none",
    );
    const pending = await storeCommands['shop rotate-signing-key'].run(deps, { shop: id });
    expect(pending.pending_public_key).toContain('BEGIN PUBLIC KEY');
    const confirmed = await confirm.run(deps, { shop: id });
    expect(confirmed.public_key).toBe(pending.pending_public_key);
    await expect(confirm.run(deps, { shop: 2_000_000_000 })).rejects.toThrow('no shop with id 2000000000');
  });

  it('kopek shop … prints the new secret and the pending key, and refuses a bad value', async () => {
    const kopek = harnessCli(h);
    // A chosen id, far from the ones other files' shops get from the sequence.
    const id = String(randomInt(1_000_000, 2_000_000_000));
    const created = await kopek('shop', 'create', '--id', id, '--test');
    expect(created.code, created.output).toBe(0);
    const bad = await kopek('shop', 'update', id, '--notification-auth', 'plain');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--notification-auth must be one of: basic, signature');
    const key = await kopek('shop', 'rotate-signing-key', id);
    expect(key.code, key.output).toBe(0);
    expect(key.stdout).toContain('-----BEGIN PUBLIC KEY-----');
    expect(key.stdout).toContain(`kopek shop confirm-signing-key ${id}`);
    const secret = await kopek('shop', 'rotate-webhook-secret', id);
    expect(secret.code, secret.output).toBe(0);
    expect(secret.stdout).toMatch(/webhook signing secret: whsec_[A-Za-z0-9_-]{43}/);
  });
});
