-- Up Migration

-- An invocation's arguments and result are the text of its call's and its
-- result's events, which the events table already holds as received (after
-- redaction). With the PostgreSQL event store the read model no longer keeps
-- a second copy: readers take the event's text where the row has none
-- (docs/adr/013-payloads-read-from-events.md). A read model fed from
-- another event store keeps its copies: its events are not in this table.
UPDATE invocations i SET arguments = NULL
WHERE i.arguments IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.event_id = i.call_event_id);
UPDATE invocations i SET result = NULL
WHERE i.result IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.event_id = i.result_event_id);

-- Down Migration

UPDATE invocations i SET arguments = (SELECT e.payload -> 'arguments' FROM events e WHERE e.event_id = i.call_event_id)
WHERE i.arguments IS NULL AND i.call_event_id IS NOT NULL;
UPDATE invocations i SET result = (SELECT e.payload -> 'result' FROM events e WHERE e.event_id = i.result_event_id)
WHERE i.result IS NULL AND i.result_event_id IS NOT NULL;
