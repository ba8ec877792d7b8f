-- The cabinet: sign-in sessions and the counters that slow down guessing of secret keys.

CREATE TABLE cabinet_sessions (
  -- SHA-256 of the session cookie's random value: a copy of this table signs nobody in.
  token_hash text PRIMARY KEY,
  -- No foreign key to shops, as since 009: a shop is never deleted (010), and a key would lock its row.
  shop_id integer NOT NULL,
  -- The shop's secret hash when the session began: rotating the key ends every session made with the old one.
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  -- Idle expiry, moved on by use; never beyond created_at plus the absolute lifetime.
  expires_at timestamptz NOT NULL,
  user_agent text
);
CREATE INDEX cabinet_sessions_expiry ON cabinet_sessions (expires_at);

-- Fixed-window counters of sign-in attempts, per address and per shop, shared by every instance.
CREATE TABLE cabinet_rate_limits (
  key text PRIMARY KEY,
  hits integer NOT NULL CHECK (hits >= 0),
  resets_at timestamptz NOT NULL
);
CREATE INDEX cabinet_rate_limits_resets ON cabinet_rate_limits (resets_at);
