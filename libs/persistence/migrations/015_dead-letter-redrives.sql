-- Up Migration

-- Each dead letter re-published to the events topic by an operator, once:
-- the key is the letter's place in the dead-letter topic, so a second
-- redrive of the same letter finds it here and publishes nothing.
CREATE TABLE dead_letter_redrives (
  topic        text        NOT NULL,
  partition    integer     NOT NULL,
  "offset"     numeric(20) NOT NULL,
  redriven_at  timestamptz NOT NULL DEFAULT now(),
  redriven_by  text        NOT NULL,
  PRIMARY KEY (topic, partition, "offset")
);

-- Down Migration

DROP TABLE dead_letter_redrives;
