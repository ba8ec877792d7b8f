-- A subscription keeps the zone its periods are counted in: its shop's zone when it was created.
-- A later change of the shop's zone changes how new subscriptions are counted and how dates are
-- shown, never when an existing subscription is charged (before this, every period end was computed
-- in the shop's current zone from a billing day read in the old one: a zone change charged twice or
-- skipped a month). Existing subscriptions take their shop's zone, the one they were counted in.
ALTER TABLE subscriptions ADD COLUMN time_zone text;
UPDATE subscriptions s SET time_zone = sh.time_zone FROM shops sh WHERE sh.id = s.shop_id;

-- The release before inserts subscriptions without the column: its rows take their shop's zone as
-- they are inserted, the zone that release counts them in.
CREATE FUNCTION subscriptions_time_zone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.time_zone IS NULL THEN
    NEW.time_zone := COALESCE((SELECT time_zone FROM shops WHERE id = NEW.shop_id), 'UTC');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER subscriptions_time_zone BEFORE INSERT ON subscriptions
  FOR EACH ROW EXECUTE FUNCTION subscriptions_time_zone();

-- contract: time_zone is NOT NULL, and the release before keeps working: the trigger above fills
-- the column of every row it inserts, before the constraint is checked.
ALTER TABLE subscriptions ALTER COLUMN time_zone SET NOT NULL;
