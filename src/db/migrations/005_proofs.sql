-- Payment proof: each proof is a ledger transaction of type 'proof' (status, amount, result in
-- `details.proof`); its document is kept here. Documents are stored once per content: the same
-- file sent twice (a retry, or one receipt for two transactions) costs one row.
CREATE TABLE proof_documents (
  -- SHA-256 of the bytes, lowercase hex: the content's identity, checked against the shop's checksum.
  checksum text PRIMARY KEY CHECK (checksum ~ '^[0-9a-f]{64}$'),
  content bytea NOT NULL,
  -- Decided by the file's magic bytes, which cannot differ for the same content.
  content_type text NOT NULL,
  size integer NOT NULL CHECK (size > 0),
  created_at timestamptz NOT NULL
);

-- The link from a proof transaction to its parent and its document. `seq` orders proofs received
-- at the same instant (the duplicate window is per parent; skip_duplicate_check allows several).
CREATE TABLE proofs (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  uid uuid PRIMARY KEY REFERENCES transactions (uid),
  parent_uid uuid NOT NULL REFERENCES transactions (uid),
  shop_id integer NOT NULL REFERENCES shops (id),
  checksum text NOT NULL REFERENCES proof_documents (checksum),
  file_name text NOT NULL,
  transaction_reference text,
  created_at timestamptz NOT NULL
);
CREATE INDEX proofs_parent ON proofs (parent_uid, seq DESC);
CREATE INDEX proofs_checksum ON proofs (checksum);
