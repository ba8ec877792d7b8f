-- What the store itself guarantees, whatever code writes to it.
--
-- CHECK constraints hold every state, status and type column to the values Kopek writes (the
-- contract's, decisions.md's, and the code's constants), and amounts to what the contract allows:
-- > 0 for money that moves or is asked for, >= 0 for stock. A CHECK on a column of the row costs an
-- insert almost nothing: no lookup, no lock.
--
-- Plain ADD CONSTRAINT, validated at once: every row was written by code that obeys these same rules,
-- so an upgraded store passes; a row that does not is damage an operator must see, and the migration
-- then fails naming the constraint and, in its transaction, changes nothing. NOT VALID with a later
-- VALIDATE would only shorten the table lock if run apart from the ADD, and migrations run before an
-- instance serves. All constraints of a table go in one ALTER TABLE, which scans the table once.
ALTER TABLE transactions
  ADD CONSTRAINT transactions_type_check
    CHECK (type IN ('payment', 'authorization', 'capture', 'void', 'refund', 'credit', 'tokenization', 'proof')),
  ADD CONSTRAINT transactions_status_check
    CHECK (status IN ('successful', 'failed', 'incomplete', 'error', 'pending')),
  ADD CONSTRAINT transactions_amount_check CHECK (amount > 0),
  -- A proof's own result (does the proven amount match?) lives in its details.
  ADD CONSTRAINT transactions_proof_status_check
    CHECK (type <> 'proof' OR details #>> '{proof,status}' IN ('successful', 'failed'));

ALTER TABLE transaction_history
  ADD CONSTRAINT transaction_history_status_check
    CHECK (status IN ('successful', 'failed', 'incomplete', 'error', 'pending'));

ALTER TABLE products
  ADD CONSTRAINT products_transaction_type_check CHECK (transaction_type IN ('payment', 'authorization')),
  ADD CONSTRAINT products_amount_check CHECK (amount > 0),
  ADD CONSTRAINT products_quantity_check CHECK (quantity >= 0);

-- `redirecting` is not in the seed's table of states but in its responses (the redirect variant).
ALTER TABLE subscriptions
  ADD CONSTRAINT subscriptions_state_check CHECK (
    state IN ('pending', 'redirecting', 'trial', 'trial_processing', 'processing', 'active', 'failed', 'error', 'canceled')
  );

-- A charge is pending until answered, unknown after a timeout (resolved by query), and then takes the
-- transaction's status. A free trial takes no charge, so every charge has an amount.
ALTER TABLE subscription_charges
  ADD CONSTRAINT subscription_charges_status_check
    CHECK (status IN ('pending', 'unknown', 'successful', 'failed', 'incomplete', 'error')),
  ADD CONSTRAINT subscription_charges_amount_check CHECK (amount > 0);

ALTER TABLE proof_documents
  ADD CONSTRAINT proof_documents_content_type_check
    CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg'));

-- NULL while the first request with the key still runs; then the HTTP status it answered.
ALTER TABLE idempotency_keys
  ADD CONSTRAINT idempotency_keys_status_code_check CHECK (status_code BETWEEN 100 AND 599);

-- 009 dropped the foreign keys to shops, plans and customers so that writers lock no parent row; cards
-- are named by token from transactions and subscriptions without one. What those keys also
-- guaranteed, that a named parent exists, now rests on parents never going away: these triggers
-- refuse deleting one, truncating its table, or changing its id. Inserts fire none of them and no
-- trigger locks a row; an UPDATE pays only when it sets the id column, and then only if it changes it.
CREATE FUNCTION refuse_parent_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% of % refused: other rows refer to its rows without a foreign key', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation', SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME,
      CONSTRAINT = TG_NAME,
      HINT = 'Shops, plans, customers and cards are never deleted and never change their id.';
END
$$;

CREATE TRIGGER shops_never_deleted BEFORE DELETE ON shops
  FOR EACH ROW EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER shops_id_never_changes BEFORE UPDATE OF id ON shops
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER shops_never_truncated BEFORE TRUNCATE ON shops
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_parent_removal();

CREATE TRIGGER plans_never_deleted BEFORE DELETE ON plans
  FOR EACH ROW EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER plans_id_never_changes BEFORE UPDATE OF id ON plans
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER plans_never_truncated BEFORE TRUNCATE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_parent_removal();

CREATE TRIGGER customers_never_deleted BEFORE DELETE ON customers
  FOR EACH ROW EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER customers_id_never_changes BEFORE UPDATE OF id ON customers
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER customers_never_truncated BEFORE TRUNCATE ON customers
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_parent_removal();

CREATE TRIGGER cards_never_deleted BEFORE DELETE ON cards
  FOR EACH ROW EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER cards_token_never_changes BEFORE UPDATE OF token ON cards
  FOR EACH ROW WHEN (OLD.token IS DISTINCT FROM NEW.token) EXECUTE FUNCTION refuse_parent_removal();
CREATE TRIGGER cards_never_truncated BEFORE TRUNCATE ON cards
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_parent_removal();
