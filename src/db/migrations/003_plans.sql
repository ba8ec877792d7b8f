-- Plans: the price and rhythm a subscription bills at. A plan is never changed after creation,
-- so subscriptions can refer to it by id. Trial columns are all null when the plan has no trial.

CREATE TABLE plans (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  title text NOT NULL,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  "interval" integer NOT NULL CHECK ("interval" >= 1),
  interval_unit text NOT NULL CHECK (interval_unit IN ('hour', 'day', 'week', 'month', 'year')),
  trial_amount bigint CHECK (trial_amount >= 0),
  trial_interval integer CHECK (trial_interval >= 1),
  trial_interval_unit text CHECK (trial_interval_unit IN ('hour', 'day', 'week', 'month', 'year')),
  trial_as_first_payment boolean,
  language text NOT NULL,
  infinite boolean NOT NULL,
  -- Null exactly when the plan bills forever.
  billing_cycles integer CHECK (billing_cycles >= 1),
  number_payment_attempts integer NOT NULL CHECK (number_payment_attempts BETWEEN 1 AND 10),
  test boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((billing_cycles IS NULL) = infinite),
  CHECK (
    (trial_amount IS NULL AND trial_interval IS NULL AND trial_interval_unit IS NULL AND trial_as_first_payment IS NULL)
    OR (trial_amount IS NOT NULL AND trial_interval IS NOT NULL AND trial_interval_unit IS NOT NULL AND trial_as_first_payment IS NOT NULL)
  )
);
CREATE INDEX plans_shop_seq ON plans (shop_id, seq DESC);
