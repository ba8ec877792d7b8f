import { createHmac } from 'node:crypto';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import type { Queryable } from '../db/db.js';
import { randomToken } from '../ids.js';
import { brandOf } from './brand.js';
import { type CardRow, findCardRow, insertCard, type NewCardRow } from './repository.js';
import type { NumberCard } from './validation.js';

/** A card as answers show it: everything but the number (api-seed "card" of a subscription). */
export interface CardRecord {
  holder: string;
  stamp: string;
  brand: string;
  last_4: string;
  first_1: string;
  bin: string;
  issuer_country: string | null;
  issuer_name: string | null;
  product: string | null;
  token: string;
  token_provider: string | null;
  exp_month: number;
  exp_year: number;
}

/** 64 base62 characters (~380 bits): a token is a bearer credential for charging the card. */
const TOKEN_LENGTH = 64;

/** What seals card numbers (sealed-columns.ts lists cards.number_enc with it). */
const VAULT = 'card-vault';

/**
 * The card's fingerprint: a keyed hash, so it cannot be reversed by trying every number of a BIN. Its
 * key is a lookup key: it stays the same when the master key rotates (lookup-keys.ts).
 */
export function cardStamp(masterKey: MasterKeys, number: string): string {
  return createHmac('sha256', keyringOf(masterKey).lookupKey('card-stamp'))
    .update(number, 'utf8')
    .digest('hex');
}

// The token is the additional data: a sealed number cannot be moved to another token's row.
const aad = (token: string) => `card:${token}`;

/**
 * A card sealed under a new token, ready to store. Every call makes a new token, even for a number
 * seen before.
 */
export function sealCard(masterKey: MasterKeys, shopId: number, card: NumberCard): NewCardRow {
  const token = randomToken(TOKEN_LENGTH);
  return {
    token,
    shop_id: shopId,
    number_enc: keyringOf(masterKey).seal(VAULT, card.number, aad(token)),
    stamp: cardStamp(masterKey, card.number),
    brand: brandOf(card.number),
    first_1: card.number.slice(0, 1),
    last_4: card.number.slice(-4),
    bin: card.number.slice(0, 6),
    holder: card.holder,
    exp_month: card.expMonth,
    exp_year: card.expYear,
  };
}

/** Stores a card under a new token. */
export function storeCard(
  db: Queryable,
  masterKey: MasterKeys,
  shopId: number,
  card: NumberCard,
  now: Date,
): Promise<CardRow> {
  return insertCard(db, sealCard(masterKey, shopId, card), now);
}

export function findCard(db: Queryable, shopId: number, token: string): Promise<CardRow | undefined> {
  return findCardRow(db, shopId, token);
}

/** The clear number, for the acquirer's decision only: never returned, stored elsewhere or logged. */
export function revealNumber(masterKey: MasterKeys, row: CardRow): string {
  return keyringOf(masterKey).open(VAULT, row.number_enc, aad(row.token)).toString('utf8');
}

export function toCardRecord(row: CardRow): CardRecord {
  return {
    holder: row.holder,
    stamp: row.stamp,
    brand: row.brand,
    last_4: row.last_4,
    first_1: row.first_1,
    bin: row.bin,
    // The sandbox has no BIN database; the platform answers null when it does not know.
    issuer_country: null,
    issuer_name: null,
    product: null,
    token: row.token,
    token_provider: null,
    exp_month: row.exp_month,
    exp_year: row.exp_year,
  };
}
