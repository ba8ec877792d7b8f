-- The cabinet's overview and subscriptions list: every filter and aggregate reads an index bounded by
-- the shop (and, for money, by the 30-day window), so a shop with a million rows pages and sums as
-- fast as a new one.

-- Filter by state (and the overview's count per state, read from this index alone).
CREATE INDEX subscriptions_shop_state ON subscriptions (shop_id, state, seq DESC);
-- Filter by plan and by customer (the customer found by e-mail first); plans and customers belong
-- to one shop, so their id alone narrows to it.
CREATE INDEX subscriptions_plan ON subscriptions (plan_id, seq DESC);
CREATE INDEX subscriptions_customer ON subscriptions (customer_id, seq DESC) WHERE customer_id IS NOT NULL;
-- "Needs attention": live subscriptions whose last charge failed and wait for a retry, soonest first.
CREATE INDEX subscriptions_shop_retrying ON subscriptions (shop_id, renew_at)
  WHERE cancelled_at IS NULL AND number_failed_payment_attempts > 0;

-- A customer and a plan looked up by what the shop owner knows of them.
CREATE INDEX customers_shop_email ON customers (shop_id, lower(email));
CREATE INDEX plans_shop_title ON plans (shop_id, title);

-- Revenue and charges per day of the last 30 days, summed from the index alone.
CREATE INDEX transactions_shop_created ON transactions (shop_id, created_at)
  INCLUDE (type, status, currency, amount);
-- The newest failed charges: failures only, however many successful ones surround them.
CREATE INDEX transactions_shop_failed ON transactions (shop_id, created_at DESC)
  WHERE status IN ('failed', 'error') AND type IN ('payment', 'authorization');

-- Notifications that failed or are being retried after a failed attempt.
CREATE INDEX events_shop_troubled ON events (shop_id, status)
  WHERE status = 'failed' OR (status = 'pending' AND attempts > 0);
