-- The cabinet's payments, proofs and their actions. Lists page by (shop_id, seq); 020 already indexes
-- transactions by (shop_id, created_at) for the date filter and customers by e-mail.

-- Filter payments by status or by type. Most rows are successful payments: those are found densely
-- by the (shop_id, seq) index itself, so only the rarer values are indexed here (the filter writes
-- the value into the statement from a closed list, so the planner can match the partial index).
CREATE INDEX transactions_shop_status ON transactions (shop_id, status, seq DESC)
  WHERE status <> 'successful';
CREATE INDEX transactions_shop_type ON transactions (shop_id, type, seq DESC)
  WHERE type <> 'payment';

-- A shop's proofs, newest first.
CREATE INDEX proofs_shop_seq ON proofs (shop_id, seq DESC);

-- One-time tokens of the cabinet's money forms (refund, capture, void): a form posted twice (a double
-- click, a resent request) finds its token used and acts once. Written in the same transaction as
-- the action, so a refused action leaves the token unused.
CREATE TABLE cabinet_form_nonces (
  nonce text PRIMARY KEY,
  shop_id integer NOT NULL,
  -- The transaction the form created: the second post shows it instead of creating another.
  result_uid uuid,
  created_at timestamptz NOT NULL
);
CREATE INDEX cabinet_form_nonces_created ON cabinet_form_nonces (created_at);
