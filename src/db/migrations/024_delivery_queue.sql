-- Webhook delivery state moves out of the events table into a narrow one of its own. An event row
-- is written once (with its payload, about a kilobyte) and no longer changes while it is delivered;
-- each attempt's claim and outcome update a row of a few dozen bytes with four indexes, where they
-- updated the whole event, every one of its ten indexes each time. A notification is an event with
-- a URL to go to: it has a deliveries row, the others have none.

CREATE TABLE deliveries (
  event_id bigint PRIMARY KEY REFERENCES events (id),
  shop_id integer NOT NULL,
  -- The event's resource: a resource's notifications go one at a time, oldest first.
  resource_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- On the shop's clock; while an attempt is on its way, when it will be looked at again.
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  -- Real time until which a deliverer holds the notification (see 014).
  leased_until timestamptz,
  -- Attempts made before the current series: a resend starts the retry schedule again from here.
  series_from integer NOT NULL DEFAULT 0 CHECK (series_from >= 0),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- A queue: every delivery leaves two dead row versions behind, and a claim steps over their index
-- entries at the head of deliveries_due until a vacuum clears them. Vacuumed after a fixed number of
-- changes, not a fifth of a table that keeps every delivery ever made and so only grows.
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);

INSERT INTO deliveries
  (event_id, shop_id, resource_id, status, attempts, next_attempt_at, delivered_at, leased_until, series_from)
SELECT id, shop_id, resource_id, status, attempts,
  CASE WHEN status = 'pending' THEN coalesce(next_attempt_at, created_at) END,
  delivered_at, leased_until, series_from
FROM events WHERE status <> 'none';

-- The deliverers' question: what is due, oldest first.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, event_id) WHERE status = 'pending';
-- Whether an earlier notification of the same resource still waits (order per resource).
CREATE INDEX deliveries_resource_pending ON deliveries (resource_id, event_id) WHERE status = 'pending';
-- The shop's notifications by status, newest first (the API's and the cabinet's filter).
CREATE INDEX deliveries_shop_status ON deliveries (shop_id, status, event_id DESC);
-- Notifications given up on, or waiting for a retry after a failed attempt (the cabinet's overview).
-- One on its way (leased) is not in it, so a first attempt that succeeds never touches it.
CREATE INDEX deliveries_shop_troubled ON deliveries (shop_id, status)
  WHERE status = 'failed' OR (status = 'pending' AND attempts > 0 AND leased_until IS NULL);

-- An attempt belongs to its delivery: recording one locks the narrow row, not the event's.
ALTER TABLE event_attempts DROP CONSTRAINT event_attempts_event_id_fkey;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_event_id_fkey
  FOREIGN KEY (event_id) REFERENCES deliveries (event_id);

-- The events' own lists of notifications no longer read a status: a notification is an event with
-- a URL (013's check made url and status agree).
DROP INDEX events_shop_notified;
DROP INDEX events_shop_event;
CREATE INDEX events_shop_notified ON events (shop_id, id DESC) WHERE url IS NOT NULL;
CREATE INDEX events_shop_event ON events (shop_id, event, id DESC) WHERE url IS NOT NULL;

DROP INDEX events_due;
DROP INDEX events_resource_pending;
DROP INDEX events_shop_troubled;
DROP INDEX events_shop_status;
ALTER TABLE events DROP CONSTRAINT events_url_status_check;
ALTER TABLE events
  DROP COLUMN status,
  DROP COLUMN attempts,
  DROP COLUMN next_attempt_at,
  DROP COLUMN delivered_at,
  DROP COLUMN leased_until,
  DROP COLUMN series_from;
