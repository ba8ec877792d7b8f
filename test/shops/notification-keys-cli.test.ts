import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StoreDeps, storeCommands } from '../../src/control/commands.js';
import { embeddedEnv, kopek } from '../foundation/kopek-process.js';
import { client, type Harness, harness, newShop } from '../harness.js';

/** `kopek shop update --notification-auth` and the notification key commands. */

let h: Harness;
let deps: StoreDeps;
const dirs: string[] = [];
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
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
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
    const dir = mkdtempSync(join(tmpdir(), 'kopek-keys-'));
    dirs.push(dir);
    const env = embeddedEnv(dir);
    const created = await kopek(env, 'shop', 'create', '--id', '3', '--test');
    expect(created.code, created.output).toBe(0);
    const bad = await kopek(env, 'shop', 'update', '3', '--notification-auth', 'plain');
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('--notification-auth must be one of: basic, signature');
    const key = await kopek(env, 'shop', 'rotate-signing-key', '3');
    expect(key.code, key.output).toBe(0);
    expect(key.output).toContain('-----BEGIN PUBLIC KEY-----');
    expect(key.output).toContain('kopek shop confirm-signing-key 3');
    const secret = await kopek(env, 'shop', 'rotate-webhook-secret', '3');
    expect(secret.code, secret.output).toBe(0);
    expect(secret.output).toMatch(/webhook signing secret: whsec_[A-Za-z0-9_-]{43}/);
  });
});
