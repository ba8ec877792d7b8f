-- E-mail: each event of the outbox is turned into the e-mails it calls for exactly once; each e-mail
-- is a row with its delivery state, sent by the mail loop over SMTP, or kept for the shop to read
-- when no SMTP server is configured.

-- Events announced before e-mail existed are not mailed now: customers would get receipts for old
-- charges. Only events written from here on wait for the fan-out.
ALTER TABLE events ADD COLUMN mail_status text NOT NULL DEFAULT 'done'
  CHECK (mail_status IN ('pending', 'done'));
ALTER TABLE events ALTER COLUMN mail_status SET DEFAULT 'pending';
-- The fan-out's question: which events are not yet turned into e-mails, oldest first.
CREATE INDEX events_mail_pending ON events (id) WHERE mail_status = 'pending';

CREATE TABLE emails (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  -- No foreign key to shops, as since 009: a shop is never deleted (010), and a key would lock its row.
  shop_id integer NOT NULL,
  -- The event that called for it. No foreign key: the outbox may be pruned, the e-mail is kept.
  event_id bigint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('receipt', 'payment_failed', 'canceled', 'transaction')),
  -- What the e-mail is about (a charge's uid, a subscription's id, an event's id): two events that
  -- tell the same thing (a failed transaction and the failed subscription) make one e-mail.
  about text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  text text NOT NULL,
  html text NOT NULL,
  -- The language the e-mail is written in (en when the subscription's has no texts).
  language text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'kept')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- On the shop's clock, as everything due.
  next_attempt_at timestamptz,
  -- Real time until which a sender holds it (it is being sent): apart from next_attempt_at, so a
  -- test shop advancing its clock does not hand an e-mail on its way to a second sender.
  leased_until timestamptz,
  sent_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL,
  UNIQUE (shop_id, kind, about),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX emails_shop_seq ON emails (shop_id, seq DESC);
-- The sender's question: what is due, oldest first.
CREATE INDEX emails_due ON emails (next_attempt_at) WHERE status = 'pending';
