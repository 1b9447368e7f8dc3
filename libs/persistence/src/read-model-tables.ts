import {
  earliestExpiry,
  type InvocationRow,
  type InvocationSeals,
  type ConversationRow,
  type ModelResponseRow,
  type RunRow,
} from '@toolhistory/domain';
import { ColumnSpec, isoText } from './sql-rows';

/** Whether the row's field rests sealed: its column in clear then stays NULL. */
const sealedField = (r: InvocationRow, field: keyof InvocationSeals): boolean => r.payloadSeals?.[field] !== undefined;

export const CONVERSATION_COLUMNS: ColumnSpec<ConversationRow>[] = [
  { name: 'tenant_id', sqlType: 'text', value: (r) => r.tenantId },
  { name: 'conversation_id', sqlType: 'text', value: (r) => r.conversationId },
  { name: 'channel', sqlType: 'text', value: (r) => r.channel },
  { name: 'first_event_at', sqlType: 'timestamptz', value: (r) => r.firstEventAt },
  { name: 'last_event_at', sqlType: 'timestamptz', value: (r) => r.lastEventAt },
  { name: 'event_count', sqlType: 'int4', value: (r) => r.eventCount },
];

export const RUN_COLUMNS: ColumnSpec<RunRow>[] = [
  { name: 'tenant_id', sqlType: 'text', value: (r) => r.tenantId },
  { name: 'conversation_id', sqlType: 'text', value: (r) => r.conversationId },
  { name: 'run_id', sqlType: 'text', value: (r) => r.runId },
  { name: 'channel', sqlType: 'text', value: (r) => r.channel },
  { name: 'status', sqlType: 'text', value: (r) => r.status },
  { name: 'started_at', sqlType: 'timestamptz', value: (r) => r.startedAt },
  { name: 'last_event_at', sqlType: 'timestamptz', value: (r) => r.lastEventAt },
  { name: 'ended_at', sqlType: 'timestamptz', value: (r) => r.endedAt },
  { name: 'assistant_message_id', sqlType: 'text', value: (r) => r.assistantMessageId },
  { name: 'finish_reason', sqlType: 'text', value: (r) => r.finishReason },
  { name: 'input_tokens', sqlType: 'int4', value: (r) => r.inputTokens },
  { name: 'output_tokens', sqlType: 'int4', value: (r) => r.outputTokens },
  { name: 'error_code', sqlType: 'text', value: (r) => r.errorCode },
  { name: 'error_message', sqlType: 'text', value: (r) => r.errorMessage },
  { name: 'user_message_id', sqlType: 'text', value: (r) => r.userMessageId },
  { name: 'cited_sources', sqlType: 'jsonb', value: (r) => r.citedSources },
];

export const RESPONSE_COLUMNS: ColumnSpec<ModelResponseRow>[] = [
  { name: 'tenant_id', sqlType: 'text', value: (r) => r.tenantId },
  { name: 'conversation_id', sqlType: 'text', value: (r) => r.conversationId },
  { name: 'run_id', sqlType: 'text', value: (r) => r.runId },
  { name: 'round_index', sqlType: 'int4', value: (r) => r.roundIndex },
  { name: 'provider', sqlType: 'text', value: (r) => r.provider },
  { name: 'model', sqlType: 'text', value: (r) => r.model },
  // Sealed, the text rests only in its seal.
  { name: 'text', sqlType: 'text', value: (r) => (r.textSeal ? null : r.text) },
  { name: 'text_seal', sqlType: 'jsonb', value: (r) => r.textSeal ?? null },
  { name: 'reasoning_bytes', sqlType: 'int4', value: (r) => r.reasoningBytes },
  { name: 'text_tokens', sqlType: 'int4', value: (r) => r.textTokens },
  { name: 'response_event_id', sqlType: 'uuid', value: (r) => r.responseEventId },
  { name: 'responded_at', sqlType: 'timestamptz', value: (r) => r.respondedAt },
];

export const SELECT_RESPONSE = `SELECT tenant_id AS "tenantId", conversation_id AS "conversationId", run_id AS "runId",
  round_index AS "roundIndex", provider, model, text, reasoning_bytes AS "reasoningBytes", text_tokens AS "textTokens", text_seal AS "textSeal", response_event_id AS "responseEventId",
  ${isoText('responded_at')} AS "respondedAt" FROM model_responses`;

const ALL_INVOCATION_COLUMNS: ColumnSpec<InvocationRow>[] = [
  { name: 'tenant_id', sqlType: 'text', value: (r) => r.tenantId },
  { name: 'conversation_id', sqlType: 'text', value: (r) => r.conversationId },
  { name: 'run_id', sqlType: 'text', value: (r) => r.runId },
  { name: 'pair_key', sqlType: 'text', value: (r) => r.pairKey },
  { name: 'round_index', sqlType: 'int4', value: (r) => r.roundIndex },
  { name: 'sequence_index', sqlType: 'int4', value: (r) => r.sequenceIndex },
  { name: 'tool_call_id', sqlType: 'text', value: (r) => r.toolCallId },
  { name: 'tool_name', sqlType: 'text', value: (r) => r.toolName },
  { name: 'arguments', sqlType: 'json', value: (r) => (sealedField(r, 'arguments') ? null : r.arguments) },
  { name: 'result', sqlType: 'json', value: (r) => (sealedField(r, 'result') ? null : (r.result ?? null)) },
  { name: 'is_error', sqlType: 'bool', value: (r) => r.isError },
  { name: 'requested_at', sqlType: 'timestamptz', value: (r) => r.requestedAt },
  { name: 'completed_at', sqlType: 'timestamptz', value: (r) => r.completedAt },
  { name: 'call_event_id', sqlType: 'uuid', value: (r) => r.callEventId },
  { name: 'result_event_id', sqlType: 'uuid', value: (r) => r.resultEventId },
  { name: 'call_after_run_end', sqlType: 'bool', value: (r) => r.callAfterRunEnd },
  { name: 'persist', sqlType: 'text', value: (r) => r.persist },
  { name: 'producer_redacted', sqlType: 'bool', value: (r) => r.producerRedacted },
  { name: 'argument_redactions', sqlType: 'jsonb', value: (r) => r.argumentRedactions },
  { name: 'result_redactions', sqlType: 'jsonb', value: (r) => r.resultRedactions },
  { name: 'arguments_bytes', sqlType: 'int4', value: (r) => r.argumentsBytes },
  { name: 'result_bytes', sqlType: 'int4', value: (r) => r.resultBytes },
  { name: 'call_tokens', sqlType: 'int4', value: (r) => r.callTokens },
  { name: 'result_tokens', sqlType: 'int4', value: (r) => r.resultTokens },
  { name: 'approval_requested_at', sqlType: 'timestamptz', value: (r) => r.approvalRequestedAt },
  {
    name: 'approval_request_reason',
    sqlType: 'text',
    value: (r) => (sealedField(r, 'approvalRequestReason') ? null : r.approvalRequestReason),
  },
  { name: 'approval_decided_at', sqlType: 'timestamptz', value: (r) => r.approvalDecidedAt },
  { name: 'approved', sqlType: 'bool', value: (r) => r.approved },
  { name: 'approval_decided_by', sqlType: 'text', value: (r) => r.approvalDecidedBy },
  {
    name: 'approval_decision_reason',
    sqlType: 'text',
    value: (r) => (sealedField(r, 'approvalDecisionReason') ? null : r.approvalDecisionReason),
  },
  { name: 'decision_run_id', sqlType: 'text', value: (r) => r.decisionRunId },
  { name: 'result_run_id', sqlType: 'text', value: (r) => r.resultRunId },
  { name: 'forked_from_conversation_id', sqlType: 'text', value: (r) => r.forkedFrom?.conversationId ?? null },
  { name: 'forked_from_position', sqlType: 'int8', value: (r) => r.forkedFrom?.position ?? null },
  { name: 'payload_seals', sqlType: 'jsonb', value: (r) => r.payloadSeals ?? null },
  { name: 'expired_payloads', sqlType: 'text[]', value: (r) => r.expiredPayloads ?? [] },
  // Expired fields have left the seals (the sweeper): what is left decides the sweeper's next visit.
  { name: 'payloads_expire_at', sqlType: 'timestamptz', value: (r) => earliestExpiry(r.payloadSeals) },
];

/**
 * Where an invocation's payload text is kept (docs/adr/013-payloads-read-from-events.md).
 * With the PostgreSQL event store, the call's and the result's events in
 * the same schema hold it as received (after redaction), so the row keeps
 * none ('events'); a read model fed from another store keeps its own copy
 * ('row').
 */
export type InvocationPayloads = 'events' | 'row';

const PAYLOAD_COLUMNS = new Set(['arguments', 'result']);

/**
 * Where the events hold the arguments and the result, a row's seal of them
 * is a note of the key and the end of retention; the sealed bytes are read
 * from the event (ADR 013: one copy of each payload).
 */
function sealNotes(seals: InvocationSeals | null | undefined): InvocationSeals | null {
  if (!seals) return null;
  const out: InvocationSeals = { ...seals };
  for (const field of ['arguments', 'result'] as const) {
    const seal = seals[field];
    if (seal !== undefined) out[field] = { key: seal.key, expiresAt: seal.expiresAt };
  }
  return out;
}

const EVENTS_PAYLOAD_COLUMNS: ColumnSpec<InvocationRow>[] = ALL_INVOCATION_COLUMNS.filter((c) => !PAYLOAD_COLUMNS.has(c.name)).map((c) =>
  c.name === 'payload_seals' ? { ...c, value: (r) => sealNotes(r.payloadSeals) } : c,
);

/** The columns a writer sets: without the payloads when they are read from events. */
export const invocationColumns = (payloads: InvocationPayloads): ColumnSpec<InvocationRow>[] =>
  payloads === 'row' ? ALL_INVOCATION_COLUMNS : EVENTS_PAYLOAD_COLUMNS;

/**
 * An invocation's payload in clear as replay and audit read it: the row's
 * own copy, else its event's (coalesce evaluates the lookup only when the
 * row has none); NULL, with no lookup, when it rests sealed or has expired.
 */
const payloadSql = (row: string, payload: 'arguments' | 'result', eventId: 'call_event_id' | 'result_event_id'): string =>
  `CASE WHEN ${row}.payload_seals ? '${payload}' OR '${payload}' = ANY(${row}.expired_payloads) THEN NULL
   ELSE coalesce(${row}.${payload}, (SELECT e.payload -> '${payload}' FROM events e WHERE e.event_id = ${row}.${eventId})) END`;
export const invocationArgumentsSql = (row: string): string => payloadSql(row, 'arguments', 'call_event_id');
export const invocationResultSql = (row: string): string => payloadSql(row, 'result', 'result_event_id');

/** The sealed payload of an event, for a seal the row keeps only a note of. */
const eventSealSql = (row: string, field: 'arguments' | 'result', eventId: 'call_event_id' | 'result_event_id'): string =>
  `CASE WHEN ${row}.payload_seals -> '${field}' ? 'data' OR NOT ${row}.payload_seals ? '${field}' THEN '{}'::jsonb
   ELSE jsonb_build_object('${field}', (SELECT (e.payload -> 'sealed')::jsonb FROM events e WHERE e.event_id = ${row}.${eventId})) END`;

/** The row's seals with each sealed payload whole (read from its event where the row keeps a note), for opening. */
export const invocationSealsSql = (row: string): string =>
  `CASE WHEN ${row}.payload_seals IS NULL THEN NULL
   ELSE ${row}.payload_seals || ${eventSealSql(row, 'arguments', 'call_event_id')} || ${eventSealSql(row, 'result', 'result_event_id')} END`;

export const SELECT_CONVERSATION = `SELECT tenant_id AS "tenantId", conversation_id AS "conversationId", channel,
  ${isoText('first_event_at')} AS "firstEventAt", ${isoText('last_event_at')} AS "lastEventAt", event_count AS "eventCount"
  FROM conversations`;

export const SELECT_RUN = `SELECT tenant_id AS "tenantId", conversation_id AS "conversationId", run_id AS "runId", channel, status,
  ${isoText('started_at')} AS "startedAt", ${isoText('last_event_at')} AS "lastEventAt", ${isoText('ended_at')} AS "endedAt",
  assistant_message_id AS "assistantMessageId", finish_reason AS "finishReason", input_tokens AS "inputTokens",
  output_tokens AS "outputTokens", error_code AS "errorCode", error_message AS "errorMessage",
  user_message_id AS "userMessageId", cited_sources AS "citedSources" FROM runs`;

/** A fork's copy names where it came from; other rows null. */
export const FORKED_FROM_SQL = `CASE WHEN forked_from_conversation_id IS NULL THEN NULL
  ELSE json_build_object('conversationId', forked_from_conversation_id, 'position', forked_from_position::text) END`;

const selectInvocation = (argumentsSql: string, resultSql: string, sealsSql: string): string => `SELECT tenant_id AS "tenantId",
  conversation_id AS "conversationId", run_id AS "runId", pair_key AS "pairKey", round_index AS "roundIndex",
  sequence_index AS "sequenceIndex", tool_call_id AS "toolCallId", tool_name AS "toolName", ${argumentsSql} AS arguments,
  ${resultSql} AS result, is_error AS "isError", ${isoText('requested_at')} AS "requestedAt",
  ${isoText('completed_at')} AS "completedAt", call_event_id AS "callEventId", result_event_id AS "resultEventId",
  call_after_run_end AS "callAfterRunEnd", persist, producer_redacted AS "producerRedacted", argument_redactions AS "argumentRedactions",
  result_redactions AS "resultRedactions", arguments_bytes AS "argumentsBytes", result_bytes AS "resultBytes",
  call_tokens AS "callTokens", result_tokens AS "resultTokens", ${isoText('approval_requested_at')} AS "approvalRequestedAt",
  approval_request_reason AS "approvalRequestReason", ${isoText('approval_decided_at')} AS "approvalDecidedAt", approved,
  approval_decided_by AS "approvalDecidedBy", approval_decision_reason AS "approvalDecisionReason",
  decision_run_id AS "decisionRunId", result_run_id AS "resultRunId", ${FORKED_FROM_SQL} AS "forkedFrom",
  ${sealsSql} AS "payloadSeals", expired_payloads AS "expiredPayloads" FROM invocations`;

/** The rows as stored, for projecting (which never reads a payload back, nor opens a seal). */
export const SELECT_INVOCATION = selectInvocation('arguments', 'result', 'payload_seals');

/** The rows with their payloads, wherever they are kept and sealed, for replay (opened by `openInvocationPayloads`). */
export const SELECT_INVOCATION_WITH_PAYLOADS = selectInvocation(
  invocationArgumentsSql('invocations'),
  invocationResultSql('invocations'),
  invocationSealsSql('invocations'),
);
