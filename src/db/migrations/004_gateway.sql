-- The card vault and the gateway's lookups on the ledger.

-- A card token refers to one encrypted card number of one shop. The number is stored only sealed
-- (AES-256-GCM under a key derived for the vault); `stamp` is a keyed hash of the number, equal for
-- every token of the same number. The CVC is never stored.
CREATE TABLE cards (
  token text PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  number_enc text NOT NULL,
  stamp text NOT NULL,
  brand text NOT NULL,
  first_1 text NOT NULL,
  last_4 text NOT NULL,
  bin text NOT NULL,
  holder text NOT NULL,
  exp_month integer NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
  exp_year integer NOT NULL CHECK (exp_year BETWEEN 1000 AND 9999),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX cards_shop_stamp ON cards (shop_id, stamp);

-- Duplicate checks and "has this card been charged before" look transactions up by card stamp.
CREATE INDEX transactions_shop_card_stamp ON transactions (shop_id, (card ->> 'stamp'), created_at);
