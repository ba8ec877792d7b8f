-- Recovery points of keyed requests (docs/redesign-plan.md B.2, B.3). A request in the phased mode
-- records how far it got in the key's own row, committed with its own steps, so a retry after a
-- crash resumes there instead of running again: 'started' (nothing that needs undoing yet, or a
-- target the retry must reuse), 'charge_claimed' (a charge is claimed and may have been sent), and
-- 'finished' (its effects are written; the answer is stored, or is rebuilt from `resource`).
-- Rows of the atomic mode are only ever written finished, so old rows become 'finished' as they are.
ALTER TABLE idempotency_keys
  ADD COLUMN recovery_point text NOT NULL DEFAULT 'finished'
    CONSTRAINT idempotency_keys_recovery_point_check
    CHECK (recovery_point IN ('started', 'charge_claimed', 'finished')),
  -- Ids only, e.g. {"subscription": "sbs_…", "period": 1, "attempt": 1}; never card data.
  ADD COLUMN resource jsonb,
  ADD COLUMN updated_at timestamptz;
