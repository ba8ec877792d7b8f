-- The cabinet finds customers by the start of their e-mail address ("jane" finds jane@example.com).
-- The index compares lower-cased addresses character by character (text_pattern_ops) rather than by
-- the database's collation, so the prefix's range of addresses is one stretch of it; a whole address
-- still finds its rows by equality.
DROP INDEX customers_shop_email;
CREATE INDEX customers_shop_email ON customers (shop_id, lower(email) text_pattern_ops);
