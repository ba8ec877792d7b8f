-- Notifications: every event of the outbox that has a URL to go to is delivered there, at least once,
-- in order per resource, with each attempt recorded.

ALTER TABLE events
  -- The notification_url of the resource when the event happened; null: no webhook for it.
  ADD COLUMN url text,
  ADD COLUMN status text NOT NULL DEFAULT 'none'
    CHECK (status IN ('none', 'pending', 'delivered', 'failed')),
  ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  ADD COLUMN next_attempt_at timestamptz,
  ADD COLUMN delivered_at timestamptz,
  ADD CONSTRAINT events_url_status_check CHECK ((url IS NULL) = (status = 'none'));

-- The deliverers' question: what is due, oldest first.
CREATE INDEX events_due ON events (next_attempt_at, id) WHERE status = 'pending';
-- Whether an earlier event of the same resource still waits (order per resource).
CREATE INDEX events_resource_pending ON events (resource_id, id) WHERE status = 'pending';

CREATE TABLE event_attempts (
  event_id bigint NOT NULL REFERENCES events (id),
  n integer NOT NULL CHECK (n >= 1),
  at timestamptz NOT NULL,
  -- null when no HTTP answer came (refused, reset, timed out, refused by the address rules)
  status_code integer CHECK (status_code BETWEEN 100 AND 599),
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  -- the first 1 KiB of the answer, or what went wrong
  response text,
  error text,
  PRIMARY KEY (event_id, n)
);
