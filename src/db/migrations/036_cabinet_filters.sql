-- The cabinet's notifications filtered by resource: an index whose leading columns are all the
-- filter asks (the shop, the resource, the events with a URL) in the list's order. With
-- events_resource (resource_id, id) and events_shop_notified (shop_id, id) alone, a planner whose
-- statistics are stale found them equally good and walked the shop's every notification to find one
-- resource's. The cabinet's other filters read indexes that lead with the shop already (020-025).
CREATE INDEX events_shop_resource ON events (shop_id, resource_id, id DESC) WHERE url IS NOT NULL;
