-- The HMAC keys of lookup values (card stamps, request fingerprints), sealed under the master key.
-- They were derived from the master key; kept here, they survive its rotation, so stamps and
-- fingerprints computed before still match. Each row is one purpose's key as derived from one master
-- key; rows a process's master keys cannot open are ignored (see src/crypto/lookup-keys.ts).
CREATE TABLE lookup_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  purpose text NOT NULL,
  key_enc text NOT NULL
);
