-- Up Migration

-- Events a projection could not apply (bad data that passed an older
-- contract, or a fault of ours it meets): it moves past them rather than
-- stop for every tenant, and keeps here what it skipped and why, for an
-- operator to look at and, once fixed, rebuild.
CREATE TABLE projection_failures (
  projection  text        NOT NULL,
  position    numeric(20) NOT NULL,
  event_id    uuid        NOT NULL,
  error_code  text        NOT NULL,
  reason      text        NOT NULL,
  failed_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (projection, position)
);

-- Down Migration

DROP TABLE projection_failures;
