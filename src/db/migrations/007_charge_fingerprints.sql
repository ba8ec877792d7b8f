-- The gateway's duplicate check (same card, amount, currency and tracking_id within 30 seconds) as a
-- key the store enforces: the first charge of a fingerprint holds its row for the window, and a charge
-- arriving while it is held is a duplicate. An INSERT ... ON CONFLICT waits for a concurrent charge of
-- the same fingerprint to commit and then sees it, so the check needs no lock and no separate read:
-- a charge is one statement. Rows older than the window are only kept until the sweep removes them.
CREATE TABLE charge_fingerprints (
  shop_id integer NOT NULL,
  fingerprint text NOT NULL,
  first_uid uuid NOT NULL,
  at timestamptz NOT NULL,
  PRIMARY KEY (shop_id, fingerprint)
);
