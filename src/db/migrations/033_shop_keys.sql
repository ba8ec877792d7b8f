-- Every key of a shop's data names the shop (docs/scaling.md). Citus spreads a table over its nodes
-- by one column, shop_id here, and can only enforce a primary key, a unique key or a foreign key
-- between two such tables when it includes that column: each is then checked within one node.
-- src/db/distribution.ts lists which tables are distributed and which are reference tables;
-- test/db/citus-schema.test.ts holds the schema to it.
--
-- The id stays the key's first column and shop_id comes after it: every lookup by id alone (a hosted
-- page by its token, a charge by its subscription, a delivery by its event) reads the same index as
-- before, and a composite foreign key (shop_id, x) finds its parent through it (a foreign key needs a
-- unique index on its columns in any order). Ids are random (or drawn from a sequence) and were never
-- made up by clients, so no two shops hold the same id in practice; the store now only promises it
-- within a shop.
--
-- contract: the release before writes rows of transaction_history, subscription_charges,
-- event_attempts and proof_documents without shop_id, and names the former keys in ON CONFLICT
-- (orders, form nonces, documents, webhook attempts): it does not run on this schema. Stop its
-- instances before `kopek migrate` (docs/operations.md, Upgrades), as for 012 and 024.

-- Foreign keys go first: each names a primary key that is about to change.
ALTER TABLE transactions DROP CONSTRAINT transactions_parent_uid_fkey;
ALTER TABLE transaction_history DROP CONSTRAINT transaction_history_uid_fkey;
ALTER TABLE proofs DROP CONSTRAINT proofs_uid_fkey;
ALTER TABLE proofs DROP CONSTRAINT proofs_parent_uid_fkey;
ALTER TABLE proofs DROP CONSTRAINT proofs_checksum_fkey;
ALTER TABLE subscription_charges DROP CONSTRAINT subscription_charges_subscription_id_fkey;
ALTER TABLE checkouts DROP CONSTRAINT checkouts_subscription_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE event_attempts DROP CONSTRAINT event_attempts_event_id_fkey;

-- Four tables only knew their shop through their parent row: they get the column, filled from it.
ALTER TABLE transaction_history ADD COLUMN shop_id integer;
UPDATE transaction_history h SET shop_id = t.shop_id FROM transactions t WHERE t.uid = h.uid;
ALTER TABLE transaction_history ALTER COLUMN shop_id SET NOT NULL;

ALTER TABLE subscription_charges ADD COLUMN shop_id integer;
UPDATE subscription_charges c SET shop_id = s.shop_id FROM subscriptions s WHERE s.id = c.subscription_id;
ALTER TABLE subscription_charges ALTER COLUMN shop_id SET NOT NULL;

ALTER TABLE event_attempts ADD COLUMN shop_id integer;
UPDATE event_attempts a SET shop_id = d.shop_id FROM deliveries d WHERE d.event_id = a.event_id;
ALTER TABLE event_attempts ALTER COLUMN shop_id SET NOT NULL;

-- A proof's document was stored once per content, whichever shops sent it; now once per content
-- and shop, so it lives with the shop's proofs. A document two shops sent is copied to each.
ALTER TABLE proof_documents DROP CONSTRAINT proof_documents_pkey;
ALTER TABLE proof_documents ADD COLUMN shop_id integer;
INSERT INTO proof_documents (checksum, content, content_type, size, created_at, shop_id)
SELECT d.checksum, d.content, d.content_type, d.size, d.created_at, s.shop_id
  FROM proof_documents d JOIN (SELECT DISTINCT checksum, shop_id FROM proofs) s ON s.checksum = d.checksum
 WHERE d.shop_id IS NULL;
-- The shopless originals: every one that a proof names now has its shop's copy.
DELETE FROM proof_documents WHERE shop_id IS NULL;
ALTER TABLE proof_documents ALTER COLUMN shop_id SET NOT NULL;
ALTER TABLE proof_documents ADD PRIMARY KEY (checksum, shop_id);

-- Primary keys: the id, then the shop.
ALTER TABLE products DROP CONSTRAINT products_pkey, ADD PRIMARY KEY (id, shop_id);
ALTER TABLE customers DROP CONSTRAINT customers_pkey, ADD PRIMARY KEY (id, shop_id);
ALTER TABLE plans DROP CONSTRAINT plans_pkey, ADD PRIMARY KEY (id, shop_id);
ALTER TABLE cards DROP CONSTRAINT cards_pkey, ADD PRIMARY KEY (token, shop_id);
ALTER TABLE transactions DROP CONSTRAINT transactions_pkey, ADD PRIMARY KEY (uid, shop_id);
-- Still read by transaction, oldest first.
ALTER TABLE transaction_history DROP CONSTRAINT transaction_history_pkey, ADD PRIMARY KEY (uid, seq, shop_id);
ALTER TABLE proofs DROP CONSTRAINT proofs_pkey, ADD PRIMARY KEY (uid, shop_id),
  DROP CONSTRAINT proofs_seq_key, ADD UNIQUE (seq, shop_id);
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_pkey, ADD PRIMARY KEY (id, shop_id);
ALTER TABLE subscription_charges DROP CONSTRAINT subscription_charges_pkey,
  ADD PRIMARY KEY (subscription_id, period, attempt, shop_id);
-- However many attempts a period takes, at most one of them is paid (012): a subscription belongs to
-- one shop, so adding the shop keeps the promise whole.
DROP INDEX subscription_charges_paid_once;
CREATE UNIQUE INDEX subscription_charges_paid_once ON subscription_charges (subscription_id, period, shop_id)
  WHERE status = 'successful';
ALTER TABLE checkouts DROP CONSTRAINT checkouts_pkey, ADD PRIMARY KEY (token, shop_id);
ALTER TABLE ctp_checkouts DROP CONSTRAINT ctp_checkouts_pkey, ADD PRIMARY KEY (token, shop_id);
ALTER TABLE product_orders DROP CONSTRAINT product_orders_pkey, ADD PRIMARY KEY (id, shop_id),
  DROP CONSTRAINT product_orders_seq_key, ADD UNIQUE (seq, shop_id),
  DROP CONSTRAINT product_orders_transaction_uid_key, ADD UNIQUE (transaction_uid, shop_id);
ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id, shop_id);
ALTER TABLE deliveries DROP CONSTRAINT deliveries_pkey, ADD PRIMARY KEY (event_id, shop_id);
ALTER TABLE event_attempts DROP CONSTRAINT event_attempts_pkey, ADD PRIMARY KEY (event_id, n, shop_id);
ALTER TABLE emails DROP CONSTRAINT emails_pkey, ADD PRIMARY KEY (id, shop_id),
  DROP CONSTRAINT emails_seq_key, ADD UNIQUE (seq, shop_id);
ALTER TABLE cabinet_form_nonces DROP CONSTRAINT cabinet_form_nonces_pkey, ADD PRIMARY KEY (nonce, shop_id);

-- The foreign keys again, each joining child and parent on the shop as well: a row can only refer
-- to a row of its own shop.
ALTER TABLE transactions ADD CONSTRAINT transactions_parent_uid_fkey
  FOREIGN KEY (shop_id, parent_uid) REFERENCES transactions (shop_id, uid);
ALTER TABLE transaction_history ADD CONSTRAINT transaction_history_uid_fkey
  FOREIGN KEY (shop_id, uid) REFERENCES transactions (shop_id, uid);
ALTER TABLE proofs
  ADD CONSTRAINT proofs_uid_fkey FOREIGN KEY (shop_id, uid) REFERENCES transactions (shop_id, uid),
  ADD CONSTRAINT proofs_parent_uid_fkey FOREIGN KEY (shop_id, parent_uid) REFERENCES transactions (shop_id, uid),
  ADD CONSTRAINT proofs_checksum_fkey FOREIGN KEY (shop_id, checksum) REFERENCES proof_documents (shop_id, checksum);
ALTER TABLE subscription_charges ADD CONSTRAINT subscription_charges_subscription_id_fkey
  FOREIGN KEY (shop_id, subscription_id) REFERENCES subscriptions (shop_id, id);
ALTER TABLE checkouts ADD CONSTRAINT checkouts_subscription_id_fkey
  FOREIGN KEY (shop_id, subscription_id) REFERENCES subscriptions (shop_id, id);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_fkey
  FOREIGN KEY (shop_id, event_id) REFERENCES events (shop_id, id);
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_event_id_fkey
  FOREIGN KEY (shop_id, event_id) REFERENCES deliveries (shop_id, event_id);
