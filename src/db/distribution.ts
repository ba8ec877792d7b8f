/**
 * How Kopek's tables spread over a Citus cluster (docs/scaling.md): the one list of which table is
 * distributed by `shop_id` and which is a reference table. test/db/citus-schema.test.ts reads the
 * migrated schema and fails when a table is in neither list, or when a distributed table has a
 * primary key, unique key or unique index without `shop_id`; it also checks that the page's table
 * names the same tables. A new table is classified here, in the same change as its migration.
 */

/** The distribution column: every distributed table has it, and every unique key includes it. */
export const DISTRIBUTION_COLUMN = 'shop_id';

/** Tables split into shards by `shop_id`; all of a shop's rows of all of them live on one node. */
export const DISTRIBUTED_TABLES: readonly string[] = [
  'idempotency_keys',
  'charge_fingerprints',
  'products',
  'customers',
  'plans',
  'cards',
  'transactions',
  'transaction_history',
  'proof_documents',
  'proofs',
  'subscriptions',
  'subscription_charges',
  'checkouts',
  'ctp_checkouts',
  'product_orders',
  'events',
  'deliveries',
  'event_attempts',
  'emails',
  'cabinet_form_nonces',
];

/** Small tables copied whole to every node, read locally by any statement, written to every node. */
export const REFERENCE_TABLES: readonly string[] = [
  'schema_migrations',
  'shops',
  'lookup_keys',
  'cabinet_sessions',
  'cabinet_rate_limits',
];
