-- The cabinet's lists of notifications and e-mails: each filter a shop can choose is an index
-- scan in the list's order, so a page costs the same with a million rows in the shop.

-- Notifications are the events that had a URL to go to, newest first; by status and by event.
CREATE INDEX events_shop_notified ON events (shop_id, id DESC) WHERE status <> 'none';
CREATE INDEX events_shop_status ON events (shop_id, status, id DESC) WHERE status <> 'none';
CREATE INDEX events_shop_event ON events (shop_id, event, id DESC) WHERE status <> 'none';
-- (By resource: events_resource (resource_id, id) of 012 already serves it.)

-- E-mails, newest first, by status, by kind and by recipient (letter case ignored, as the API's filter).
CREATE INDEX emails_shop_status ON emails (shop_id, status, seq DESC);
CREATE INDEX emails_shop_kind ON emails (shop_id, kind, seq DESC);
CREATE INDEX emails_shop_recipient ON emails (shop_id, lower(recipient), seq DESC);
