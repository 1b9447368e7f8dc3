-- Up Migration

-- The host's message that started a run (the events' userMessageId): a
-- replayed turn without an assistant message goes right after it.
ALTER TABLE runs ADD COLUMN user_message_id text;

-- A person's approval of a call, and the later run that recorded the
-- decision or the result when it is not the call's own (the run that
-- resumed after the person answered). Null until the event is recorded.
ALTER TABLE invocations
  ADD COLUMN approval_requested_at timestamptz,
  ADD COLUMN approval_request_reason text,
  ADD COLUMN approval_decided_at timestamptz,
  ADD COLUMN approved boolean,
  ADD COLUMN approval_decided_by text,
  ADD COLUMN approval_decision_reason text,
  ADD COLUMN decision_run_id text,
  ADD COLUMN result_run_id text;

-- A later run's decision or result finds the call that awaits it by id.
CREATE INDEX invocations_awaiting_approval ON invocations (tenant_id, conversation_id, tool_call_id)
  WHERE approval_requested_at IS NOT NULL;

-- Search documents are refreshed by the keys of the events recorded: a
-- result recorded in a later run names that run.
CREATE INDEX invocations_by_result_run ON invocations (tenant_id, conversation_id, result_run_id, pair_key)
  WHERE result_run_id IS NOT NULL;

-- Down Migration

DROP INDEX invocations_by_result_run;
DROP INDEX invocations_awaiting_approval;
ALTER TABLE invocations
  DROP COLUMN result_run_id,
  DROP COLUMN decision_run_id,
  DROP COLUMN approval_decision_reason,
  DROP COLUMN approval_decided_by,
  DROP COLUMN approved,
  DROP COLUMN approval_decided_at,
  DROP COLUMN approval_request_reason,
  DROP COLUMN approval_requested_at;
ALTER TABLE runs DROP COLUMN user_message_id;
