-- Hosted checkout: the expiry of a subscription's payment page is announced once, and the platform's
-- checkout API (`POST /ctp/api/checkouts`) keeps its checkouts.

-- Set by the expiry sweep in the same transaction as the event that tells the shop: announced once,
-- whichever instance's sweep got there first.
ALTER TABLE checkouts ADD COLUMN expiry_announced_at timestamptz;
CREATE INDEX checkouts_unannounced_expiry ON checkouts (expires_at)
  WHERE completed_at IS NULL AND expiry_announced_at IS NULL;

CREATE TABLE ctp_checkouts (
  token text PRIMARY KEY,
  -- No foreign key to shops, as since 009: a shop is never deleted (010), and a key would lock its row.
  shop_id integer NOT NULL,
  transaction_type text NOT NULL CHECK (transaction_type IN ('payment', 'authorization', 'tokenization')),
  -- How many declined tries the buyer has; null: no limit until the token expires.
  attempts integer CHECK (attempts >= 1),
  failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
  test boolean NOT NULL,
  version text,
  "order" jsonb NOT NULL,
  settings jsonb NOT NULL,
  customer jsonb,
  payment_method jsonb,
  -- The checkout's outcome as the API shows it: null while the buyer has not finished.
  status text CHECK (status IN ('successful', 'failed', 'error', 'incomplete', 'expired')),
  message text,
  -- The last transaction the page made (or, for tokenization, the stored card's answer).
  gateway_response jsonb,
  transaction_uid uuid,
  -- A try in progress claims the checkout until this instant, so two posts of one form pay once.
  paying_until timestamptz,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  finished_at timestamptz,
  expiry_announced_at timestamptz
);
CREATE INDEX ctp_checkouts_unannounced_expiry ON ctp_checkouts (expires_at)
  WHERE finished_at IS NULL AND expiry_announced_at IS NULL;
