-- Recurring billing: each charge of a period may take several attempts (retries), each with its own
-- row and key, so no attempt can be made twice; subscription events wait in an outbox for delivery;
-- shops get their billing settings and test shops their clock.

ALTER TABLE subscription_charges ADD COLUMN attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1);
ALTER TABLE subscription_charges DROP CONSTRAINT subscription_charges_pkey;
ALTER TABLE subscription_charges ADD PRIMARY KEY (subscription_id, period, attempt);
ALTER TABLE subscription_charges DROP COLUMN attempts;
-- `abandoned`: claimed, and then proven never to have reached the gateway (a query found nothing
-- after the claim's lease ran out), so the period may be tried again under a new attempt.
ALTER TABLE subscription_charges DROP CONSTRAINT subscription_charges_status_check;
ALTER TABLE subscription_charges ADD CONSTRAINT subscription_charges_status_check
  CHECK (status IN ('pending', 'unknown', 'successful', 'failed', 'incomplete', 'error', 'abandoned'));
CREATE INDEX subscription_charges_open ON subscription_charges (subscription_id)
  WHERE status IN ('pending', 'unknown', 'incomplete');
-- However many attempts a period takes, at most one of them is paid.
CREATE UNIQUE INDEX subscription_charges_paid_once ON subscription_charges (subscription_id, period)
  WHERE status = 'successful';

-- The outbox: written in the same transaction as the change it announces; deliverers only read it.
CREATE TABLE events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  shop_id integer NOT NULL,
  resource_type text NOT NULL CHECK (resource_type IN ('subscription', 'transaction', 'checkout', 'proof')),
  resource_id text NOT NULL,
  event text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_resource ON events (resource_id, id);
CREATE INDEX events_shop ON events (shop_id, id DESC);

ALTER TABLE shops
  ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC',
  -- {"failed": ["P1D", ...], "error": ["PT1H", ...]}: delays between attempts; null: the platform's rule.
  ADD COLUMN retry_schedule jsonb,
  -- {"start": "20:00", "end": "08:00"}: local hours in which no charge is attempted.
  ADD COLUMN quiet_hours jsonb,
  -- A test shop's clock runs this far ahead of real time; it only grows.
  ADD COLUMN clock_offset_ms bigint NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0);

-- The scheduler's question: which subscriptions are due, oldest first.
DROP INDEX IF EXISTS subscriptions_due;
CREATE INDEX subscriptions_due ON subscriptions (renew_at) WHERE cancelled_at IS NULL AND renew_at IS NOT NULL;
