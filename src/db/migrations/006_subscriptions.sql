-- Subscriptions, the charges made for them, and hosted checkout tokens.

CREATE TABLE subscriptions (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  plan_id text NOT NULL REFERENCES plans (id),
  customer_id text REFERENCES customers (id),
  -- The card lives in the gateway's vault (possibly another deployment): kept here by token and
  -- summary, never by number.
  card_token text,
  card jsonb,
  state text NOT NULL,
  tracking_id text,
  device_id text,
  return_url text,
  notification_url text,
  additional_data jsonb NOT NULL DEFAULT '{}',
  receipt_text jsonb,
  avs_cvc_verification jsonb,
  settings jsonb,
  language text NOT NULL,
  dynamic_billing_descriptor text,
  -- Regular periods are counted from this instant (after the trial, if any), so they never drift.
  billing_anchor timestamptz NOT NULL,
  -- The day of month that month and year periods keep (clamped to short months). Not always the
  -- anchor's own day: after a one-month trial from Jan 31 the anchor is Feb 28, the day still 31.
  billing_day smallint NOT NULL CHECK (billing_day BETWEEN 1 AND 31),
  renew_at timestamptz,
  active_to timestamptz,
  paid_billing_cycles integer NOT NULL DEFAULT 0,
  number_failed_payment_attempts integer NOT NULL DEFAULT 0,
  -- Summary of the newest charge as the gateway last reported it: uid, status, message, created_at.
  last_transaction jsonb,
  cancel_reason text,
  cancelled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX subscriptions_shop_seq ON subscriptions (shop_id, seq DESC);
CREATE INDEX subscriptions_shop_tracking ON subscriptions (shop_id, tracking_id, seq);
CREATE INDEX subscriptions_due ON subscriptions (renew_at) WHERE cancelled_at IS NULL;

-- One row per billing period (0 = the trial charge): the primary key makes a second charge for
-- the same period impossible, whatever retries or instances do.
CREATE TABLE subscription_charges (
  subscription_id text NOT NULL REFERENCES subscriptions (id),
  period integer NOT NULL,
  amount bigint NOT NULL,
  currency text NOT NULL,
  -- pending (not answered yet), unknown (timed out: resolve by query), or the transaction status
  status text NOT NULL,
  transaction_uid uuid,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (subscription_id, period)
);
CREATE INDEX subscription_charges_transaction ON subscription_charges (transaction_uid);

-- A hosted payment page session: the redirect variant sends the customer to it by token.
CREATE TABLE checkouts (
  token text PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  subscription_id text REFERENCES subscriptions (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  completed_at timestamptz
);
