-- Up Migration

-- Event store: the source of truth. Append-only; one stream per conversation.
CREATE TABLE streams (
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  version          integer     NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id)
);

-- Global positions are allocated only while holding the append lock (see
-- docs/adr/002-global-position-allocation.md), so they become visible in order.
CREATE SEQUENCE events_global_position_seq AS bigint;

CREATE TABLE events (
  global_position  bigint      PRIMARY KEY,
  event_id         uuid        NOT NULL UNIQUE,
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  stream_position  integer     NOT NULL,
  run_id           text        NOT NULL,
  type             text        NOT NULL,
  schema_version   integer     NOT NULL,
  occurred_at      timestamptz NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  payload          jsonb       NOT NULL,
  UNIQUE (tenant_id, conversation_id, stream_position)
);
CREATE INDEX events_tenant_position_idx ON events (tenant_id, global_position);

-- Read model: derived from events, rebuildable at any time.
CREATE TABLE conversations (
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  channel          text        NOT NULL,
  first_event_at   timestamptz NOT NULL,
  last_event_at    timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id)
);

CREATE TABLE runs (
  tenant_id            text        NOT NULL,
  conversation_id      text        NOT NULL,
  run_id               text        NOT NULL,
  channel              text        NOT NULL,
  status               text        NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  started_at           timestamptz NOT NULL,
  last_event_at        timestamptz NOT NULL,
  ended_at             timestamptz,
  assistant_message_id text,
  finish_reason        text,
  input_tokens         integer,
  output_tokens        integer,
  error_code           text,
  error_message        text,
  PRIMARY KEY (tenant_id, conversation_id, run_id)
);
CREATE INDEX runs_conversation_started_idx ON runs (tenant_id, conversation_id, started_at);

-- One row per tool call, keyed by the call's id, or by round and sequence
-- when the LLM gave no id, so a result pairs with its call in any order.
CREATE TABLE invocations (
  tenant_id                  text        NOT NULL,
  conversation_id            text        NOT NULL,
  run_id                     text        NOT NULL,
  pair_key                   text        NOT NULL,
  round_index                integer     NOT NULL,
  sequence_index             integer     NOT NULL,
  tool_call_id               text        NOT NULL,
  tool_name                  text,
  arguments                  jsonb,
  result                     jsonb,
  is_error                   boolean,
  requested_at               timestamptz,
  completed_at               timestamptz,
  call_event_id              uuid,
  result_event_id            uuid,
  call_after_run_end         boolean     NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, conversation_id, run_id, pair_key)
);
CREATE INDEX invocations_tool_requested_idx ON invocations (tenant_id, tool_name, requested_at);

-- The recorder's Kafka position, committed in the same transaction as the
-- events it read: the source of truth for where to resume.
CREATE TABLE consumer_offsets (
  group_id     text        NOT NULL,
  topic        text        NOT NULL,
  partition    integer     NOT NULL,
  next_offset  bigint      NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition)
);

-- Down Migration

DROP TABLE consumer_offsets;
DROP TABLE invocations;
DROP TABLE runs;
DROP TABLE conversations;
DROP TABLE events;
DROP SEQUENCE events_global_position_seq;
DROP TABLE streams;
