-- Every insert pays for every index of its table. These indexes answered no query.

-- seq is an identity: unique by how it is generated. Lists page by (shop_id, seq), which has its own
-- index on every table.
ALTER TABLE products DROP CONSTRAINT products_seq_key;
ALTER TABLE customers DROP CONSTRAINT customers_seq_key;
ALTER TABLE transactions DROP CONSTRAINT transactions_seq_key;
ALTER TABLE plans DROP CONSTRAINT plans_seq_key;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_seq_key;

-- Only captures, voids, refunds and proofs have a parent; charges no longer add a NULL entry.
DROP INDEX transactions_parent;
CREATE INDEX transactions_parent ON transactions (parent_uid) WHERE parent_uid IS NOT NULL;

-- History is read by transaction, oldest first: one index serves as key and lookup.
ALTER TABLE transaction_history DROP CONSTRAINT transaction_history_pkey;
DROP INDEX transaction_history_uid;
ALTER TABLE transaction_history ADD PRIMARY KEY (uid, seq);

-- Nothing looks cards up by stamp: charges find a card by token, duplicates by fingerprint.
DROP INDEX cards_shop_stamp;

-- "Was this card charged before" is asked only for the sandbox card whose outcome depends on it
-- (first charge approved, later ones declined). Its charges carry `remembered_card` in details, and
-- only they are indexed, instead of every transaction by card stamp.
DROP INDEX transactions_shop_card_stamp;
UPDATE transactions SET details = details || '{"remembered_card": true}'
  WHERE card ->> 'bin' = '400000' AND card ->> 'last_4' = '0226' AND type IN ('payment', 'authorization');
CREATE INDEX transactions_remembered_card ON transactions (shop_id, (card ->> 'stamp'))
  WHERE details ? 'remembered_card' AND type IN ('payment', 'authorization') AND status = 'successful';
