import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Signer, signHere } from '../../src/notifications/signer.js';

/**
 * Content-Signature made on signing threads: the same signature the event loop would make, for the
 * right key, however many are asked for at once; and made all the same when a thread stops.
 */

// Three different RSA pairs from the run's pool (test/signing-keys.ts): making them here cost a second.
const shops = inject('signingKeys')
  .slice(0, 3)
  .map((keys) => ({
    privateKey: createPrivateKey(keys.privateKey),
    publicKey: createPublicKey(keys.publicKey),
  }));

const valid = (publicKey: KeyObject, body: string, signature: string) =>
  verify('sha256', Buffer.from(body), publicKey, Buffer.from(signature, 'base64'));

let signer: Signer | undefined;
afterEach(async () => {
  await signer?.close();
  signer = undefined;
});

describe('signing threads', () => {
  it('sign many bodies at once, each with its own shop key, as the event loop would', async () => {
    signer = new Signer(2);
    const jobs = Array.from({ length: 300 }, (_, i) => ({
      shop: shops[i % shops.length] as (typeof shops)[number],
      body: JSON.stringify({ event: 'renewed.subscription', id: `sbs_${i}`, amount: i }),
    }));
    const signatures = await Promise.all(jobs.map((j) => signer?.sign(j.shop.privateKey, j.body)));
    jobs.forEach((j, i) => {
      const signature = signatures[i] as string;
      // PKCS #1 v1.5 is deterministic: the thread's signature is the loop's, byte for byte.
      expect(signature).toBe(signHere(j.shop.privateKey, j.body));
      expect(valid(j.shop.publicKey, j.body, signature)).toBe(true);
      const other = shops[(i + 1) % shops.length] as (typeof shops)[number];
      expect(valid(other.publicKey, j.body, signature)).toBe(false);
    });
    // All of them made on the threads: none fell back to the event loop.
    expect(signer.signedHere).toBe(0);
  });

  it('give a thread a key again when it has dropped it for others, and still sign on the thread', async () => {
    // Threads hold 2 keys; 3 shops take turns, so each batch asks for a key the thread let go.
    signer = new Signer(1, 2);
    for (let round = 0; round < 4; round++) {
      for (const [i, shop] of shops.entries()) {
        const body = `round ${round} shop ${i}`;
        const signature = await signer.sign(shop.privateKey, body);
        expect(valid(shop.publicKey, body, signature)).toBe(true);
      }
    }
    expect(signer.signedHere).toBe(0);
  });

  it('sign on the event loop with no threads', async () => {
    signer = new Signer(0);
    const [shop] = shops;
    const signature = await signer.sign(shop?.privateKey as KeyObject, '{"a":1}');
    expect(valid(shop?.publicKey as KeyObject, '{"a":1}', signature)).toBe(true);
  });

  it('still sign everything asked for when a thread stops on its way, and go on signing after', async () => {
    signer = new Signer(1);
    const [shop] = shops;
    const key = shop?.privateKey as KeyObject;
    const first = await signer.sign(key, 'warm');
    expect(valid(shop?.publicKey as KeyObject, 'warm', first)).toBe(true);
    // The thread is stopped while a batch is on its way to it.
    const asked = Array.from({ length: 50 }, (_, i) => signer?.sign(key, `body ${i}`));
    await new Promise((r) => setImmediate(r));
    await Promise.all(signer.workers().map((w) => w.terminate()));
    const made = await Promise.all(asked);
    made.forEach((signature, i) => {
      expect(valid(shop?.publicKey as KeyObject, `body ${i}`, signature as string)).toBe(true);
    });
    // A new thread took its place; it is given the key again.
    const later = await signer.sign(key, 'later');
    expect(valid(shop?.publicKey as KeyObject, 'later', later)).toBe(true);
    expect(signer.workers()).toHaveLength(1);
  });

  it('stop replacing threads that keep dying, and sign on the event loop from then on', async () => {
    signer = new Signer(1);
    const [shop] = shops;
    const key = shop?.privateKey as KeyObject;
    await signer.sign(key, 'warm');
    // The first death is replaced; the second is one too many for a signer of one thread.
    await Promise.all(signer.workers().map((w) => w.terminate()));
    expect(signer.workers()).toHaveLength(1);
    await Promise.all(signer.workers().map((w) => w.terminate()));
    expect(signer.workers()).toEqual([]);
    const before = signer.signedHere;
    const signature = await signer.sign(key, 'after');
    expect(valid(shop?.publicKey as KeyObject, 'after', signature)).toBe(true);
    expect(signer.signedHere).toBe(before + 1);
  });

  it('sign what is on its way when the signer is closed at shutdown', async () => {
    signer = new Signer(1);
    const [shop] = shops;
    const asked = Array.from({ length: 40 }, (_, i) => signer?.sign(shop?.privateKey as KeyObject, `b${i}`));
    await new Promise((r) => setImmediate(r));
    await signer.close();
    const made = await Promise.all(asked);
    made.forEach((signature, i) => {
      expect(valid(shop?.publicKey as KeyObject, `b${i}`, signature as string)).toBe(true);
    });
    expect(signer.workers()).toEqual([]);
  });

  it('fail a signature only when the key cannot sign at all, and keep signing for others', async () => {
    signer = new Signer(1);
    const ec = generateKeyPairSync('ed25519');
    // Ed25519 takes no digest name: node refuses sign('sha256', …, key) on the thread and here.
    await expect(signer.sign(ec.privateKey, 'x')).rejects.toThrow();
    const [shop] = shops;
    const ok = await signer.sign(shop?.privateKey as KeyObject, 'y');
    expect(valid(shop?.publicKey as KeyObject, 'y', ok)).toBe(true);
  });
});
