-- Up Migration

-- The last global position recorded with a partition's offset, kept where
-- the read model follows the event store rather than committing with it
-- (EventStoreDB): a read with a consistency token then waits for the
-- read-model projection to pass it (docs/adr/026-read-your-writes-branches-and-forks.md).
ALTER TABLE consumer_offsets ADD COLUMN recorded_position numeric(20);

-- Forks: a conversation that starts with a copy of another's history, up
-- to a message. Part of the event store (its copied events say where each
-- came from); erasing a conversation removes its copies from every fork
-- found here, transitively.
CREATE TABLE conversation_forks (
  tenant_id               text        NOT NULL,
  conversation_id         text        NOT NULL,
  source_conversation_id  text        NOT NULL,
  up_to_message_id        text        NOT NULL,
  up_to_position          bigint      NOT NULL,
  forked_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, conversation_id)
);
CREATE INDEX conversation_forks_source_idx ON conversation_forks (tenant_id, source_conversation_id);

-- A forked conversation's copy of an invocation names where it came from.
ALTER TABLE invocations
  ADD COLUMN forked_from_conversation_id text,
  ADD COLUMN forked_from_position bigint;

-- Down Migration

ALTER TABLE invocations DROP COLUMN forked_from_position, DROP COLUMN forked_from_conversation_id;
DROP TABLE conversation_forks;
ALTER TABLE consumer_offsets DROP COLUMN recorded_position;
