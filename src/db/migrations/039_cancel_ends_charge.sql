-- A cancel ends the subscription's open charge (decisions.md, "A cancel ends the open charge").
-- `reversal` says what becomes of money an attempt takes after its subscription was cancelled:
-- 'due' when the cancel found the attempt open (a 3-D Secure step, a pending or unknown outcome,
-- a request still in flight): should it settle as successful, the payment is refunded at once;
-- 'refunded' once the gateway answered the refund (`reversal_uid`). A refund still due after a crash
-- is made by billing's next pass, found through the partial index.
ALTER TABLE subscription_charges ADD COLUMN reversal text
  CHECK (reversal IN ('due', 'refunded'));
ALTER TABLE subscription_charges ADD COLUMN reversal_uid uuid;
CREATE INDEX subscription_charges_reversal_due ON subscription_charges (shop_id)
  WHERE reversal = 'due' AND status = 'successful';
