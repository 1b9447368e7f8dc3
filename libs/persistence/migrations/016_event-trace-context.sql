-- Up Migration

-- The W3C trace context (traceparent) a producer sent with the Kafka
-- message, kept beside the event and never in its payload: an audit
-- listing names the trace that made each invocation.
ALTER TABLE events ADD COLUMN traceparent text;

-- Down Migration

ALTER TABLE events DROP COLUMN traceparent;
