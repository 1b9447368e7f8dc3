-- Up Migration

-- Encryption at rest and retention (docs/adr/033-encryption-at-rest-and-retention.md).
-- Events rest with their payload members sealed (the event's `sealed`
-- member); an invocation row notes, per payload field, the sealed payload
-- of the event it came from: whole for what the row keeps itself (approval
-- reasons; every payload where events live in another store), only the key
-- and the end of retention where its event holds it (arguments and result
-- with events in this schema). The fields in clear then stay NULL.
ALTER TABLE invocations
  ADD COLUMN payload_seals jsonb,
  -- Payload fields whose retention ended: the sweeper removed them from the read model and search.
  ADD COLUMN expired_payloads text[] NOT NULL DEFAULT '{}',
  -- The earliest end of retention among the sealed payloads not yet expired: the sweeper's work.
  ADD COLUMN payloads_expire_at timestamptz;

CREATE INDEX invocations_payloads_expire_at ON invocations (payloads_expire_at) WHERE payloads_expire_at IS NOT NULL;

-- Down Migration

DROP INDEX invocations_payloads_expire_at;
ALTER TABLE invocations DROP COLUMN payloads_expire_at, DROP COLUMN expired_payloads, DROP COLUMN payload_seals;
