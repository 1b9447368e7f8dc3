-- Up Migration

-- What the recorder's redaction kept of each invocation (docs/adr/005-redaction-at-the-recorder.md).
ALTER TABLE invocations
  ADD COLUMN persist            text    NOT NULL DEFAULT 'full' CHECK (persist IN ('full', 'metadata', 'none')),
  ADD COLUMN argument_redactions jsonb  NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN result_redactions  jsonb   NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN arguments_bytes    integer,
  ADD COLUMN result_bytes       integer;

-- An erased conversation keeps its stream row as a tombstone: the recorder
-- drops any later event of it, so a redelivery cannot bring it back.
ALTER TABLE streams ADD COLUMN erased_at timestamptz;

-- Down Migration

ALTER TABLE streams DROP COLUMN erased_at;
ALTER TABLE invocations
  DROP COLUMN result_bytes,
  DROP COLUMN arguments_bytes,
  DROP COLUMN result_redactions,
  DROP COLUMN argument_redactions,
  DROP COLUMN persist;
