import { describe, expect, it } from 'vitest';
import { FORM_NONCE_KEPT_MS, purgeCabinetState } from '../../src/cabinet/sessions.js';
import { harness, newShop } from '../harness.js';

/** What `kopek serve` clears now and then: ended sessions and sign-in windows, old form tokens. */

describe('cabinet purge', () => {
  it('drops ended sessions and rate-limit windows, and money-form tokens past their keeping', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const now = new Date('2026-03-01T12:00:00Z');
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const tag = `purge-${shop.shop.id}`;
    for (const [name, expires] of [
      ['ended', ago(1)],
      ['live', new Date(now.getTime() + 60_000)],
    ] as const) {
      await h.db.query(
        `INSERT INTO cabinet_sessions (token_hash, shop_id, secret_hash, created_at, last_seen_at, expires_at)
         VALUES ($1, $2, 'x', $3, $3, $4)`,
        [`${tag}-${name}`, shop.shop.id, ago(3_600_000), expires],
      );
      await h.db.query('INSERT INTO cabinet_rate_limits (key, hits, resets_at) VALUES ($1, 1, $2)', [
        `${tag}-${name}`,
        expires,
      ]);
    }
    for (const [name, at] of [
      ['old', ago(FORM_NONCE_KEPT_MS)],
      ['kept', ago(FORM_NONCE_KEPT_MS - 60_000)],
    ] as const)
      await h.db.query('INSERT INTO cabinet_form_nonces (nonce, shop_id, created_at) VALUES ($1, $2, $3)', [
        `${tag}-${name}`,
        shop.shop.id,
        at,
      ]);

    await purgeCabinetState(h.db, now);

    const left = async (table: string, column: string) =>
      (
        await h.db.query<{ k: string }>(
          `SELECT ${column} AS k FROM ${table} WHERE ${column} LIKE $1 ORDER BY 1`,
          [`${tag}-%`],
        )
      ).map((r) => r.k);
    expect(await left('cabinet_sessions', 'token_hash')).toEqual([`${tag}-live`]);
    expect(await left('cabinet_rate_limits', 'key')).toEqual([`${tag}-live`]);
    expect(await left('cabinet_form_nonces', 'nonce')).toEqual([`${tag}-kept`]);
  });
});
