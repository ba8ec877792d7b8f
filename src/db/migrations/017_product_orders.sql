-- Product payment pages: one row per buyer's attempt to pay a product (an order). Its id is the
-- one-time token the page's form carries, so a double click or a reloaded POST finds the order the
-- first submission made instead of charging again; it is also the charge's tracking_id, so a charge
-- whose answer was lost (a crash, a timeout) is found by querying the gateway.
--
-- A product with finite stock gives an order one unit when the order is made (a conditional
-- decrement of products.quantity in the same transaction), before the card is charged: of many
-- buyers of the last unit exactly one gets it, and the others are never sent to the acquirer. The
-- order gives the unit back, in the transaction that records it, when its charge is declined, fails,
-- its 3-D Secure step fails or is abandoned, or it never reached the gateway.
CREATE TABLE product_orders (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  -- No foreign keys, as since 009: shops and products are never deleted, and a key would lock the
  -- product row that every buyer of the product updates.
  shop_id integer NOT NULL,
  product_id text NOT NULL,
  -- charging: unit held, charge under way; waiting: unit held, the charge waits for 3-D Secure or an
  -- acquirer's late answer; paid: the unit is sold; declined: the charge did not take money, unit
  -- given back; invalid: the gateway refused the request (a field to correct), unit given back.
  state text NOT NULL CHECK (state IN ('charging', 'waiting', 'paid', 'declined', 'invalid')),
  -- Whether the order took a unit of stock (false for unlimited products).
  holds_unit boolean NOT NULL,
  transaction_uid uuid UNIQUE,
  transaction_status text
    CHECK (transaction_status IN ('successful', 'failed', 'incomplete', 'error', 'pending')),
  -- Where the charge asked the buyer to go for 3-D Secure.
  redirect_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- Orders still holding a unit, looked up when a product seems sold out.
CREATE INDEX product_orders_open ON product_orders (product_id, seq) WHERE state IN ('charging', 'waiting');
