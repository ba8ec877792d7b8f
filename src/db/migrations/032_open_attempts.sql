-- Attempts still waiting for their outcome (sent and unanswered, or of unknown outcome) are few; the
-- billing engine looks for those of cancelled subscriptions once their lease is over, since such a
-- subscription never falls due again to have them resolved (billing/renew.ts: resolveCancelled).
CREATE INDEX subscription_charges_waiting ON subscription_charges (updated_at)
  WHERE status IN ('pending', 'unknown');
