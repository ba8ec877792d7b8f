-- A card subscription announces itself (created.subscription) together with the outcome of its first
-- charge, so the event carries the state the API answered, whichever path the charge took: in one
-- batch with the gateway in this process, or claimed first and recorded after a remote gateway's
-- answer. Until then its row is not yet announced. Every existing row has been announced.
ALTER TABLE subscriptions ADD COLUMN announced boolean NOT NULL DEFAULT true;
