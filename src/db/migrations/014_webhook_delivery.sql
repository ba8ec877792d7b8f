-- Webhook delivery: deliverers lease events on real time, a resend starts a new series of retries,
-- and shops keep a sealed copy of their secret key so notifications can carry HTTP Basic.

ALTER TABLE events
  -- Real time until which a deliverer holds the event (it is being sent). Kept apart from
  -- next_attempt_at, which is on the shop's clock: advancing a test shop's clock must not hand an
  -- event that is on its way to a second deliverer.
  ADD COLUMN leased_until timestamptz,
  -- Attempts made before the current series: a resend starts the retry schedule again from here.
  ADD COLUMN series_from integer NOT NULL DEFAULT 0 CHECK (series_from >= 0);

-- The shop's secret key, sealed under a key derived from the master key for this purpose alone.
-- Null for shops created before: their notifications go without Basic until they get a new key.
ALTER TABLE shops ADD COLUMN secret_enc text;
