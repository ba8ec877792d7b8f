-- The transaction ledger: every money movement and card operation, with its status history.

CREATE TABLE transactions (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  uid uuid PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  -- payment, authorization, capture, void, refund, credit, tokenization, proof
  type text NOT NULL,
  -- successful, failed, incomplete, error, pending
  status text NOT NULL,
  message text,
  amount bigint NOT NULL,
  currency text NOT NULL,
  description text,
  tracking_id text,
  parent_uid uuid REFERENCES transactions (uid),
  test boolean NOT NULL,
  language text,
  -- The card token used (never the number); the card summary is kept in `card` for answers.
  card_token text,
  card jsonb,
  billing_address jsonb,
  customer jsonb,
  three_d_secure jsonb,
  avs_cvc jsonb,
  return_url text,
  notification_url text,
  -- Type-specific members (refund reason, proof result, receipt, additional_data, ...).
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  paid_at timestamptz
);
CREATE INDEX transactions_shop_seq ON transactions (shop_id, seq DESC);
CREATE INDEX transactions_shop_tracking ON transactions (shop_id, tracking_id, seq);
CREATE INDEX transactions_parent ON transactions (parent_uid);

-- Append-only: each status a transaction takes, so a change is recorded, never silently overwritten.
CREATE TABLE transaction_history (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uid uuid NOT NULL REFERENCES transactions (uid),
  status text NOT NULL,
  message text,
  at timestamptz NOT NULL
);
CREATE INDEX transaction_history_uid ON transaction_history (uid, seq);
