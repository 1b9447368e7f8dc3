-- Up Migration

-- A per-conversation version for readers that cache: it changes with every
-- event applied to the conversation's read-model rows.
ALTER TABLE conversations ADD COLUMN event_count integer NOT NULL DEFAULT 0;

-- Down Migration

ALTER TABLE conversations DROP COLUMN event_count;
