-- Up Migration

-- The trace context of events kept in another event store (EventStoreDB
-- keeps it in each event's metadata): copied here by the projection that
-- follows that store, so audit listings name the trace of each invocation
-- whichever store holds the events. Erased with the conversation.
CREATE TABLE external_event_traces (
  event_id        uuid PRIMARY KEY,
  tenant_id       text NOT NULL,
  conversation_id text NOT NULL,
  traceparent     text NOT NULL
);
CREATE INDEX external_event_traces_conversation_idx ON external_event_traces (tenant_id, conversation_id);

-- Down Migration

DROP TABLE external_event_traces;
