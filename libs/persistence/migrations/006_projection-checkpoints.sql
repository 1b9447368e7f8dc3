-- Up Migration

-- The last global position of the event store applied to a projection of
-- it: written in the same transaction as the projection's rows, so the two
-- never disagree. The read model's entry is set by a rebuild, and followed
-- by the projector when events live in EventStoreDB.
CREATE TABLE projection_checkpoints (
  projection  text        PRIMARY KEY,
  position    numeric(20) NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration

DROP TABLE projection_checkpoints;
