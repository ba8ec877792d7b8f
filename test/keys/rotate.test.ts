import { createSign, createVerify, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CardRow } from '../../src/cards/repository.js';
import { cardStamp, revealNumber, storeCard } from '../../src/cards/vault.js';
import { ManualClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { storeCommands } from '../../src/control/commands.js';
import { rotateKeys } from '../../src/control/key-commands.js';
import { Keyring, keyringOf, MasterKeyError, masterKeyId } from '../../src/crypto/keyring.js';
import { openKeyring } from '../../src/crypto/lookup-keys.js';
import { countLeft } from '../../src/crypto/rotate.js';
import { SEALED_COLUMNS } from '../../src/crypto/sealed-columns.js';
import { rotateSigningKey, rotateWebhookSecret } from '../../src/shops/notification-keys.js';
import type { ShopRow } from '../../src/shops/repository.js';
import { createShop, hashSecret, shopSecret, signingKeyOf } from '../../src/shops/service.js';
import { openWebhookSecret } from '../../src/shops/webhook-secret.js';
import { pooledSigningKeys, shopSigningKeys } from '../signing-keys.js';
import {
  type FreshStore,
  freshStore,
  keysConfig,
  rotateDeps,
  sealedBeforeKeyIds,
  silentLog,
} from './store.js';

/**
 * `kopek keys rotate` re-seals every sealed value under the current master key while Kopek serves,
 * stopped anywhere it loses nothing, and afterwards the previous key is not needed: every card
 * charges, every shop's notifications sign and verify, every shop secret authenticates.
 */

const A = randomBytes(32);
const B = randomBytes(32);
const NUMBERS = ['4200000000000000', '5555555555554444'];

let store: FreshStore;
const clock = new ManualClock();
const apps: App[] = [];
const shops: { id: number; secret: string }[] = [];
type Shop = { id: number; secret: string };
const cards: { token: string; stamp: string; number: string; shop: Shop }[] = [];
let keyedAnswer: unknown;

const appWith = async (masterKey: Keyring | Buffer, config = keysConfig(A)) => {
  const app = await buildApp({ config, db: store.db, clock, masterKey, log: silentLog });
  apps.push(app);
  return app;
};

const basic = (id: number, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function post(
  app: App,
  shop: { id: number; secret: string },
  url: string,
  body: unknown,
  key?: string,
) {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: {
      authorization: basic(shop.id, shop.secret),
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json() };
}

const tokenize = (app: App, shop: { id: number; secret: string }, number: string) =>
  post(app, shop, '/credit_cards', {
    request: { number, holder: 'Jane Roe', exp_month: '03', exp_year: '2031' },
  });

const payWithToken = (app: App, shop: { id: number; secret: string }, token: string) =>
  post(app, shop, '/transactions/payments', {
    request: {
      amount: 1999,
      currency: 'EUR',
      description: 'Rotation',
      tracking_id: `rot-${randomUUID()}`,
      credit_card: { token },
    },
  });

const shopRows = () => store.db.query<ShopRow>('SELECT * FROM shops ORDER BY id');
const cardRows = () => store.db.query<CardRow>('SELECT * FROM cards ORDER BY token');

/** Every sealed value opens under `ring` to what was stored. */
async function everythingOpens(ring: Keyring): Promise<void> {
  const byToken = new Map(cards.map((c) => [c.token, c]));
  for (const row of await cardRows()) expect(revealNumber(ring, row)).toBe(byToken.get(row.token)?.number);
  for (const row of await shopRows()) {
    const shop = shops.find((s) => s.id === row.id);
    expect(hashSecret(shopSecret(ring, row) as string)).toBe(row.secret_hash);
    if (shop) expect(shopSecret(ring, row)).toBe(shop.secret);
    const signature = createSign('RSA-SHA256').update('{"n":1}').sign(signingKeyOf(ring, row), 'base64');
    expect(createVerify('RSA-SHA256').update('{"n":1}').verify(row.public_key, signature, 'base64')).toBe(
      true,
    );
    // The webhook secrets (current and the one still signing beside it) and a pending key pair.
    for (const sealed of [row.webhook_secret_enc, row.webhook_secret_prev_enc])
      if (sealed !== null) expect(openWebhookSecret(ring, sealed)).toMatch(/^whsec_/);
    if (row.pending_private_key_enc !== null && row.pending_public_key !== null) {
      const pending = keyringOf(ring).open('shop-signing-key', row.pending_private_key_enc).toString('utf8');
      const signed = createSign('RSA-SHA256').update('{"n":2}').sign(pending, 'base64');
      expect(
        createVerify('RSA-SHA256').update('{"n":2}').verify(row.pending_public_key, signed, 'base64'),
      ).toBe(true);
    }
  }
}

async function leftUnder(ring: Keyring): Promise<number> {
  let left = 0;
  for (const c of SEALED_COLUMNS) left += await countLeft(store.db, ring, c);
  return left;
}

beforeAll(async () => {
  store = await freshStore();
  const appA = await appWith(A);
  const signingKeys = shopSigningKeys();
  for (let i = 0; i < 3; i++) {
    const created = await createShop({ db: store.db, clock, masterKey: A }, { test: true, signingKeys });
    shops.push({ id: created.shop.id, secret: created.secret });
  }
  for (const [i, shop] of shops.entries()) {
    for (let n = 0; n < 4; n++) {
      const number = NUMBERS[(i + n) % 2] as string;
      const res = await tokenize(appA, shop, number);
      expect(res.status).toBe(200);
      cards.push({ token: res.body.token, stamp: res.body.stamp, number, shop });
    }
  }
  // The second shop mid-way through both notification key rotations: every sealed column holds a value.
  const second = shops[1] as Shop;
  await rotateWebhookSecret({ db: store.db, clock, masterKey: A }, second.id);
  await rotateSigningKey({ db: store.db, masterKey: A }, second.id, pooledSigningKeys());
  const sealedColumns = await store.db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name LIKE '%\\_enc'`,
  );
  // Every column that holds a sealed value is one the rotation walks.
  expect(sealedColumns.map((c) => `${c.table_name}.${c.column_name}`).sort()).toEqual(
    SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort(),
  );
  // The first shop and its cards as Kopek sealed them before master key ids.
  const first = shops[0] as Shop;
  const [row] = await store.db.query<ShopRow>('SELECT * FROM shops WHERE id = $1', [first.id]);
  await store.db.query('UPDATE shops SET private_key_enc = $2, secret_enc = $3 WHERE id = $1', [
    first.id,
    sealedBeforeKeyIds(A, 'shop-signing-key', signingKeyOf(A, row as ShopRow)),
    sealedBeforeKeyIds(A, 'shop-secret-key', first.secret),
  ]);
  for (const c of cards.slice(0, 4))
    await store.db.query('UPDATE cards SET number_enc = $2 WHERE token = $1', [
      c.token,
      sealedBeforeKeyIds(A, 'card-vault', c.number, `card:${c.token}`),
    ]);
  const keyed = await post(
    appA,
    first,
    '/customers',
    { email: 'kept@example.com', ip: '203.0.113.7' },
    'rot-1',
  );
  expect(keyed.status).toBe(201);
  keyedAnswer = keyed.body;
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await store?.close();
});

describe('kopek keys rotate', () => {
  it('opens values sealed before key ids; seals new ones under the current key, marked with its id', async () => {
    const ring = new Keyring(B, [A]);
    await everythingOpens(ring);
    expect(ring.seal('card-vault', 'x')).toMatch(new RegExp(`^k1:${masterKeyId(B)}:[A-Za-z0-9+/]+=*$`));
    expect(ring.open('card-vault', new Keyring(A).seal('card-vault', 'x')).toString()).toBe('x');
  });

  it('tells which key a value needs when it is not given, and refuses keys that open nothing', async () => {
    const other = new Keyring(randomBytes(32));
    const [legacy] = await store.db.query<CardRow>('SELECT * FROM cards WHERE number_enc NOT LIKE $1', [
      'k1:%',
    ]);
    const [marked] = await store.db.query<CardRow>('SELECT * FROM cards WHERE number_enc LIKE $1', ['k1:%']);
    expect(() => revealNumber(other, legacy as CardRow)).toThrow(MasterKeyError);
    expect(() => revealNumber(other, legacy as CardRow)).toThrow(/opens under none of the master keys given/);
    expect(() => revealNumber(other, marked as CardRow)).toThrow(
      new RegExp(`sealed under master key ${masterKeyId(A)}, which is neither KOPEK_MASTER_KEY`),
    );
    const before = await cardRows();
    const wrong = new Keyring(randomBytes(32), [randomBytes(32)]);
    await expect(rotateKeys(rotateDeps(store.db, clock, wrong), {})).rejects.toThrow(
      /open none of the values sealed in this store.*Nothing was changed/,
    );
    expect(await cardRows()).toEqual(before);
    expect(await store.db.query('SELECT * FROM lookup_keys')).toEqual([]);
  });

  it('stopped after any batch, before or after its commit, loses nothing and finishes when run again', async () => {
    let stops = 0;
    for (let k = 1; ; k++) {
      let reached = false;
      for (const phase of ['written', 'committed'] as const) {
        const ring = new Keyring(B, [A]);
        const stop = (n: number, at: string) => {
          if (n === k && at === phase) throw new Error(`stopped after batch ${k} (${phase})`);
        };
        const run = rotateKeys(rotateDeps(store.db, clock, ring), { batchSize: 3 }, { onBatch: stop });
        reached = await run.then(
          () => false,
          (err: Error) => {
            expect(err.message).toBe(`stopped after batch ${k} (${phase})`);
            return true;
          },
        );
        if (reached) stops += 1;
        // Whatever it did, every value opens under the keys the instances hold.
        await everythingOpens(ring);
        const rest = await rotateKeys(rotateDeps(store.db, clock, ring), { batchSize: 3 });
        expect(rest.done).toBe(true);
        expect(await leftUnder(ring)).toBe(0);
        // Under B only now: the previous key is not needed. Then back to A, for the next round.
        await everythingOpens(new Keyring(B));
        const back = await rotateKeys(rotateDeps(store.db, clock, new Keyring(A, [B])), { batchSize: 50 });
        expect(back.done).toBe(true);
      }
      if (!reached) break;
    }
    // 12 cards, 6 shop values and 2 lookup keys, 3 to a batch: at least 7 batches, stopped twice each.
    expect(stops).toBeGreaterThanOrEqual(14);
  });

  it('rotates while the app serves; afterwards the previous key is not needed', async () => {
    const during = new Keyring(B, [A]);
    const appB = await appWith(during, keysConfig(B, [A]));
    let rotating = true;
    const traffic = (async () => {
      let n = 0;
      while (rotating || n < 3) {
        // The third shop's secret is replaced meanwhile: traffic goes to the other two.
        const shop = shops[n % 2] as Shop;
        const own = cards.filter((c) => c.shop === shop);
        const paid = await payWithToken(appB, shop, (own[n % own.length] as { token: string }).token);
        expect(paid.body.transaction?.status, JSON.stringify(paid.body)).toBe('successful');
        const number = NUMBERS[n % 2] as string;
        const res = await tokenize(appB, shop, number);
        expect(res.status).toBe(200);
        cards.push({ token: res.body.token, stamp: res.body.stamp, number, shop });
        n += 1;
      }
    })();
    // A concurrent writer of a sealed column: the shop's new secret is kept, whatever the rotation read.
    const deps = {
      ...rotateDeps(store.db, clock, during),
      forgetShop: (id: number) => appB.shopAuthenticator.forget(id),
    };
    const last = shops[2] as Shop;
    const [report, rotated] = await Promise.all([
      rotateKeys(deps, { batchSize: 2 }).finally(() => {
        rotating = false;
      }),
      storeCommands['shop rotate-key'].run(deps, { shop: last.id }),
    ]);
    await traffic;
    last.secret = rotated.secret;
    const done = report.done ? report : await rotateKeys(deps, { batchSize: 2 });
    expect(done.done).toBe(true);
    expect(done.previousKeys).toEqual([masterKeyId(A)]);

    // An instance holding only the new key: every card charges, with the stamp it always had.
    const only = new Keyring(B);
    expect(await leftUnder(only)).toBe(0);
    await everythingOpens(only);
    const appC = await appWith(only, keysConfig(B));
    const stampOf = new Map(cards.map((c) => [c.number, c.stamp]));
    for (const [i, c] of cards.entries()) {
      const paid = await payWithToken(appC, c.shop, c.token);
      expect(paid.body.transaction?.status, `card ${i}: ${JSON.stringify(paid.body)}`).toBe('successful');
      expect(c.stamp).toBe(stampOf.get(c.number));
    }
    const again = await tokenize(appC, shops[1] as Shop, NUMBERS[0] as string);
    expect(again.body.stamp).toBe(stampOf.get(NUMBERS[0] as string));
    // Shop secrets authenticate; a request keyed before the rotation is still recognised and replayed.
    for (const shop of shops) {
      const res = await appC.inject({
        method: 'GET',
        url: '/shop',
        headers: { authorization: basic(shop.id, shop.secret) },
      });
      expect(res.statusCode).toBe(200);
    }
    const replay = await post(
      appC,
      shops[0] as Shop,
      '/customers',
      { email: 'kept@example.com', ip: '203.0.113.7' },
      'rot-1',
    );
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(keyedAnswer);
  });
});

describe('lookup keys', () => {
  it('an instance given a new key and the old one keeps the stamps of the cards stored under the old', async () => {
    const own = await freshStore();
    try {
      const { shop } = await createShop({ db: own.db, clock, masterKey: A }, { test: true });
      const card = {
        kind: 'number',
        number: NUMBERS[0] as string,
        holder: 'J',
        expMonth: 3,
        expYear: 2031,
      } as const;
      const row = await storeCard(own.db, A, shop.id, { ...card, cvc: undefined }, clock.now());
      const ring = await openKeyring(own.db, new Keyring(B, [A]));
      expect(cardStamp(ring, card.number)).toBe(row.stamp);
      // Stored, sealed under the new key: an instance given only the new key has them too.
      const only = await openKeyring(own.db, new Keyring(B));
      expect(cardStamp(only, card.number)).toBe(row.stamp);
    } finally {
      await own.close();
    }
  });
});
