-- Up Migration

-- The listing's order within one instant, conversation and run: by round,
-- then by the call's place in its parallel batch, as a reader of a run
-- expects (the pair key alone put call 1 before call 0 when both were
-- recorded in the same millisecond). The pair key stays last, as the
-- tie-break of a call and a result recorded apart under one index.
CREATE INDEX invocations_tenant_listing_v2_idx
  ON invocations (tenant_id, at, conversation_id, run_id, round_index, sequence_index, pair_key);
DROP INDEX invocations_tenant_listing_idx;

-- Down Migration

CREATE INDEX invocations_tenant_listing_idx ON invocations (tenant_id, at, conversation_id, run_id, pair_key);
DROP INDEX invocations_tenant_listing_v2_idx;
