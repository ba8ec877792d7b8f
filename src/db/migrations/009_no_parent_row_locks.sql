-- A foreign key check locks the parent row (FOR KEY SHARE) for the rest of the inserting transaction.
-- When many transactions insert under the same parent at once, as every write of a shop does under
-- its shop row and every new subscription does under a popular plan, those shared locks pile up on
-- one row as multixacts: a PostgreSQL hot spot. With ten connections creating subscriptions for one
-- shop, these keys cost about a sixth of PostgreSQL's CPU time per subscription.
--
-- These parents are never deleted and never change their id: shops, plans (immutable once created)
-- and customers. Every shop_id written comes from the authenticated shop, and a plan or customer id
-- is looked up for the shop before a subscription names it, so the keys below guarded nothing the
-- application does not. Keys whose parent rows are not shared hot spots stay (charges of a
-- subscription, children of a transaction, history, proofs).
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_shop_id_fkey;
ALTER TABLE products DROP CONSTRAINT products_shop_id_fkey;
ALTER TABLE customers DROP CONSTRAINT customers_shop_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT transactions_shop_id_fkey;
ALTER TABLE cards DROP CONSTRAINT cards_shop_id_fkey;
ALTER TABLE proofs DROP CONSTRAINT proofs_shop_id_fkey;
ALTER TABLE plans DROP CONSTRAINT plans_shop_id_fkey;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_shop_id_fkey;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_plan_id_fkey;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_customer_id_fkey;
ALTER TABLE checkouts DROP CONSTRAINT checkouts_shop_id_fkey;
