-- Up Migration

-- An invocation's time for audit: its call's, else its result's (a result
-- can be recorded before its call). Kept as a column so listings and usage
-- read one indexed value.
ALTER TABLE invocations ADD COLUMN at timestamptz GENERATED ALWAYS AS (coalesce(requested_at, completed_at)) STORED;

-- The listing's stable order, per tenant (keyset pagination).
CREATE INDEX invocations_tenant_listing_idx ON invocations (tenant_id, at, conversation_id, run_id, pair_key);

-- Down Migration

DROP INDEX invocations_tenant_listing_idx;
ALTER TABLE invocations DROP COLUMN at;
