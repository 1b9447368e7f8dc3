-- Up Migration

-- The pair key (call and result meet on it, read-model-keys.ts) of each
-- call, approval and result event, written when the event is appended:
-- the search projections follow the events' keys only, and without it
-- they would take the key from the payload, decompressing and parsing
-- every payload they follow (docs/adr/028-recording-past-one-postgresql.md).
-- Null for the other events, and for events appended before this
-- migration (whose key is still taken from the payload). Adding a column
-- with no default rewrites nothing.
ALTER TABLE events ADD COLUMN pair_key text;

-- Down Migration

ALTER TABLE events DROP COLUMN pair_key;
