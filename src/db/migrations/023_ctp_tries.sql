-- Checkout API: each try at paying a checkout is numbered, so a try is known by a deterministic key
-- (`{token}-{try}`, sent to the gateway with the payment) committed with its claim before the gateway
-- is asked. A try whose process died is then resolved by asking the gateway for that key, never by
-- charging again blindly.
ALTER TABLE ctp_checkouts ADD COLUMN tries integer NOT NULL DEFAULT 0 CHECK (tries >= 0);
