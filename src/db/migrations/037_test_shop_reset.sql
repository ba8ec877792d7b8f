-- A test shop's clean start (POST /test_clock/reset) deletes its plans, customers and cards together
-- with every row that names them, in one transaction. The guards of 010 still refuse every other
-- removal: a parent row goes only inside a transaction that declared the reset of its own shop
-- (`SELECT set_config('kopek.reset_shop', '<shop id>', true)`), and only when that shop is a test
-- shop. Shops themselves are never deleted, and no id ever changes.
CREATE OR REPLACE FUNCTION refuse_parent_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Nested: OLD has a shop_id only on a row deleted from these tables (not on shops, nor on TRUNCATE).
  IF TG_OP = 'DELETE' AND TG_TABLE_NAME IN ('plans', 'customers', 'cards') THEN
    IF OLD.shop_id::text = current_setting('kopek.reset_shop', true)
       AND EXISTS (SELECT 1 FROM shops WHERE id = OLD.shop_id AND test) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION '% of % refused: other rows refer to its rows without a foreign key', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation', SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME,
      CONSTRAINT = TG_NAME,
      HINT = 'Shops, plans, customers and cards are never deleted (but by a test shop''s reset) and never change their id.';
END
$$;
