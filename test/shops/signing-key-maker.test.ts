import { describe, expect, inject, it } from 'vitest';
import { rotateSigningKey } from '../../src/shops/notification-keys.js';
import { createShop } from '../../src/shops/service.js';
import { client, harness, newShop } from '../harness.js';
import { pooledSigningKeys, shopSigningKeys } from '../signing-keys.js';

/**
 * Where a shop's new signing key pair comes from: the services' maker when they have one (tests
 * give pairs made once per run), else a fresh RSA pair every time, as in production.
 */

describe('the signing key maker', () => {
  it('the API rotation and a new shop take their pair from services.signingKeys', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const api = client(h, shop);
    const rotated = await api.post('/shop/signing_key/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const pool = inject('signingKeys');
    expect(pool.slice(1).map((k) => k.publicKey)).toContain(rotated.body.pending_public_key);
    expect(rotated.body.pending_public_key).not.toBe(shopSigningKeys().publicKey);

    const made = pooledSigningKeys();
    const { shop: own } = await createShop({ ...h, signingKeys: () => made }, { test: true });
    expect(own.publicKey).toBe(made.publicKey);
  });

  it('without one, every rotation makes a fresh pair', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const deps = { db: h.db, masterKey: h.masterKey };
    const first = await rotateSigningKey(deps, shop.shop.id);
    const second = await rotateSigningKey(deps, shop.shop.id);
    const pool = inject('signingKeys').map((k) => k.publicKey);
    expect(first.pending_public_key).toContain('-----BEGIN PUBLIC KEY-----');
    expect(second.pending_public_key).not.toBe(first.pending_public_key);
    expect(pool).not.toContain(first.pending_public_key);
    expect(pool).not.toContain(second.pending_public_key);
  });
});
