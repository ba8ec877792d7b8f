-- Idempotency fingerprints were a plain SHA-256 of the request, card number and CVC included, kept
-- beside an answer that shows part of the card: together they could be reversed by trying the
-- missing digits. Fingerprints are now keyed hashes; the old ones are dropped, not re-keyed (the
-- bodies are gone). Such a key replays its stored answer for any body until it expires.
UPDATE idempotency_keys SET fingerprint = 'unverifiable';
