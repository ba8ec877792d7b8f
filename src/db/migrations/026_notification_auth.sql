-- How a shop's notifications authenticate, and what signs them besides the RSA Content-Signature.
--
-- notification_auth: 'basic' sends HTTP Basic shop_id:secret_key (over https only), as the platform's
-- clients expect; 'signature' sends no credentials at all. Every shop starts with 'basic', so
-- receivers that check Basic keep working.
ALTER TABLE shops
  ADD COLUMN notification_auth text NOT NULL DEFAULT 'basic'
    CHECK (notification_auth IN ('basic', 'signature')),
  -- The webhook signing secret (whsec_…) of the Kopek-Signature header, sealed under the master key
  -- like secret_enc. Null for shops created before it existed: one is made on first use (SQL cannot
  -- seal).
  ADD COLUMN webhook_secret_enc text,
  -- The secret it replaced, still signing beside it until webhook_secret_prev_until (the shop's clock).
  ADD COLUMN webhook_secret_prev_enc text,
  ADD COLUMN webhook_secret_prev_until timestamptz,
  -- A new RSA key pair, shown to the shop but not signing until the shop confirms it.
  ADD COLUMN pending_public_key text,
  ADD COLUMN pending_private_key_enc text,
  ADD CHECK ((pending_public_key IS NULL) = (pending_private_key_enc IS NULL));

-- The Kopek-Signature header an attempt went with, for the cabinet to show as sent (it depends on
-- the attempt's time and on the secrets then in force). Null for attempts made before it was kept.
ALTER TABLE event_attempts ADD COLUMN kopek_signature text;
