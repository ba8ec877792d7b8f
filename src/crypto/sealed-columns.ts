import { LOOKUP_SEAL_PURPOSE, lookupAad } from './lookup-keys.js';

/**
 * Every column that holds a value sealed with the master key (Keyring.seal), as `kopek keys rotate`
 * walks them. A new sealed column is one more line here, saying how its code seals it: the purpose it
 * passes to seal/open and the additional data, made from the row's id and the `with` columns.
 */
export interface SealedColumn {
  table: string;
  /** A unique, ordered column: the walk goes through the table in its order. */
  id: string;
  column: string;
  purpose: string;
  /** Other columns the additional data is made of. */
  with?: readonly string[];
  /** The additional data the value was sealed with; none when absent. */
  aad?: (row: Record<string, unknown>) => string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'cards', id: 'token', column: 'number_enc', purpose: 'card-vault', aad: (r) => `card:${r.token}` },
  { table: 'shops', id: 'id', column: 'private_key_enc', purpose: 'shop-signing-key' },
  { table: 'shops', id: 'id', column: 'secret_enc', purpose: 'shop-secret-key' },
  { table: 'shops', id: 'id', column: 'pending_private_key_enc', purpose: 'shop-signing-key' },
  { table: 'shops', id: 'id', column: 'webhook_secret_enc', purpose: 'shop-webhook-secret' },
  { table: 'shops', id: 'id', column: 'webhook_secret_prev_enc', purpose: 'shop-webhook-secret' },
  {
    table: 'lookup_keys',
    id: 'id',
    column: 'key_enc',
    purpose: LOOKUP_SEAL_PURPOSE,
    with: ['purpose'],
    aad: (r) => lookupAad(String(r.purpose)),
  },
];

export const columnName = (c: SealedColumn) => `${c.table}.${c.column}`;
