-- The deliverers' claim reads a shop's queue through indexes that lead with the shop, so what it reads
-- grows with what it claims and the number of shops with notifications waiting, never with how many
-- wait (docs/notifications.md, Who delivers them). Before, one shop's backlog of 10,000 was read whole
-- on every claim: as the rows of a shop already holding its share of slots, skipped one by one, and,
-- with statistics that still said the table was nearly empty, as a sort of every due row with a probe
-- per row (of deliveries_shop_status, every pending row of the shop) for an earlier event of its
-- resource.

-- A shop's pending notifications, oldest due first: the claim takes each shop's first few, and steps
-- from one shop to the next through it.
CREATE INDEX deliveries_shop_due ON deliveries (shop_id, next_attempt_at, event_id) WHERE status = 'pending';
-- Whether an earlier notification of the same resource still waits (order per resource): exactly the
-- claim's question, so one probe answers it however many of the shop's notifications wait.
CREATE INDEX deliveries_shop_resource_pending ON deliveries (shop_id, resource_id, event_id)
  WHERE status = 'pending';

-- Their places: nothing else reads them, and each claim and outcome writes every index of the row.
DROP INDEX deliveries_due;
DROP INDEX deliveries_resource_pending;

-- The latest clock of any shop (a test shop's may run ahead): the claims of renewals, e-mails and
-- expired pages read their queue only as far as it, so a queue of work due later is not read
-- whole by every look that finds nothing due. One descent, not a read of every shop.
CREATE INDEX shops_clock_offset ON shops (clock_offset_ms);
