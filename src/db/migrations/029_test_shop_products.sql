-- A test shop takes no real money: its products and plans are test products and plans, whatever
-- was sent when they were made (until now a test shop's product defaulted to live).
UPDATE products p SET test = true FROM shops s WHERE s.id = p.shop_id AND s.test AND NOT p.test;
UPDATE plans p SET test = true FROM shops s WHERE s.id = p.shop_id AND s.test AND NOT p.test;
