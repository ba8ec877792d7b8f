-- The payment form embedded in a shop's own page (docs/embedding.md).
--
-- frame_origins: the origins (scheme://host[:port]) that may frame the shop's checkout pages; NULL
-- lets any site frame them, as before the shop names any.
ALTER TABLE shops ADD COLUMN frame_origins jsonb;

-- A checkout opened with `checkout.iframe: true`: its page lays out for a frame and ends a payment
-- by telling the shop's window where to go, whatever address it was opened with.
ALTER TABLE ctp_checkouts ADD COLUMN iframe boolean NOT NULL DEFAULT false;

-- The widget's public-key integration names the shop by its public key (the one that verifies its
-- notifications), as the base64 body of the PEM: found through this column's index.
ALTER TABLE shops ADD COLUMN public_key_body text
  GENERATED ALWAYS AS (regexp_replace(public_key, '-----[A-Z ]+-----|\s', '', 'g')) STORED;
CREATE INDEX shops_public_key_body ON shops (public_key_body);
