-- A subscription keeps the zone its periods are counted in: its shop's zone when it was created.
-- A later change of the shop's zone changes how new subscriptions are counted and how dates are
-- shown, never when an existing subscription is charged (before this, every period end was computed
-- in the shop's current zone from a billing day read in the old one: a zone change charged twice or
-- skipped a month). Existing subscriptions take their shop's zone, the one they were counted in.
ALTER TABLE subscriptions ADD COLUMN time_zone text;
UPDATE subscriptions s SET time_zone = sh.time_zone FROM shops sh WHERE sh.id = s.shop_id;
UPDATE subscriptions SET time_zone = 'UTC' WHERE time_zone IS NULL;
ALTER TABLE subscriptions ALTER COLUMN time_zone SET NOT NULL;
