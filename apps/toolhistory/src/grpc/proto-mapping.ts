import type {
  ApprovalState,
  HistoryFormat,
  Omission,
  OmissionReason,
  ReasoningOmission,
  ReplayedRound,
  RecordedToolEvent,
  ReplayHistory,
  StaleResultMode,
} from '@toolhistory/domain';
import { HISTORY_FORMAT_LIST, HISTORY_FORMATS } from '@toolhistory/contract';
import { AppError, ErrorCode } from '@toolhistory/errors';
import type { Timestamp } from '@toolhistory/grpc-api';
import {
  approvalAsOf,
  InvocationRecord,
  InvocationStatus,
  PersistMode,
  resultText,
  RunStatus,
  SearchHit,
  SearchHitField,
  SearchMatch,
  statusOf,
  UsageBucket,
  UsageReport,
  withoutSealNote,
} from '@toolhistory/domain';

/** google.protobuf.Timestamp as @grpc/proto-loader gives it with `longs: String` (the generated type, which says so). */
export type TimestampMessage = Timestamp;

/** The range of google.protobuf.Timestamp: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;

const invalid = (message: string) => new AppError(ErrorCode.InvalidArgument, message);

/** A request's timestamp in milliseconds; outside Timestamp's range (or with nanos out of range) it is INVALID_ARGUMENT naming `field`. */
export function timestampToMillis(ts: TimestampMessage | null | undefined, field = 'timestamp'): number | undefined {
  if (!ts) return undefined;
  const seconds = Number(ts.seconds ?? 0);
  const nanos = ts.nanos ?? 0;
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw invalid(`${field}.seconds must be between ${MIN_SECONDS} and ${MAX_SECONDS} (0001-01-01 to 9999-12-31)`);
  }
  if (!Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) throw invalid(`${field}.nanos must be between 0 and 999999999`);
  return seconds * 1000 + Math.floor(nanos / 1e6);
}

/**
 * A request's enum field: unset or `…_UNSPECIFIED` gives the default, a known
 * name its value; anything else (a number this build does not know) is
 * INVALID_ARGUMENT naming the field, never quietly the default.
 */
function enumOf<T>(field: string, value: string | number | undefined, names: Readonly<Record<string, T>>, fallback: T): T {
  if (value === undefined || value === 0 || (typeof value === 'string' && value.endsWith('_UNSPECIFIED'))) return fallback;
  if (typeof value === 'string' && Object.hasOwn(names, value)) return names[value];
  throw invalid(`${field}: ${JSON.stringify(value)} is not one of ${Object.keys(names).join(', ')}`);
}

/** ISO-8601 with up to microseconds, kept exactly. */
export function isoToTimestamp(iso: string): TimestampMessage {
  const millis = Date.parse(iso);
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '';
  const nanos = Number(fraction.padEnd(9, '0').slice(0, 9));
  return { seconds: String(Math.floor(millis / 1000)), nanos };
}

/** The service's format of each of the API's HistoryFormat values (the contract's HISTORY_FORMATS). */
const FORMAT_OF_PROTO: Readonly<Record<string, HistoryFormat>> = Object.fromEntries(
  HISTORY_FORMAT_LIST.map((format) => [HISTORY_FORMATS[format].proto, format]),
);

export const formatOf = (value: string | number | undefined): HistoryFormat =>
  enumOf<HistoryFormat>('format', value, FORMAT_OF_PROTO, 'openai_chat');

export const staleResultsOf = (value: string | number | undefined): StaleResultMode | undefined =>
  enumOf<StaleResultMode | undefined>(
    'stale_results',
    value,
    { STALE_RESULT_MODE_DROP: 'drop', STALE_RESULT_MODE_PLACEHOLDER: 'placeholder' },
    undefined,
  );

/** Which representations of each turn a response carries (ReplayView). */
export type ReplayView = 'all' | 'messages' | 'structured';

export const viewOf = (value: string | number | undefined): ReplayView =>
  enumOf<ReplayView>('view', value, { REPLAY_VIEW_MESSAGES: 'messages', REPLAY_VIEW_STRUCTURED: 'structured' }, 'all');

export const RUN_STATUS: Record<RunStatus, string> = {
  running: 'RUN_STATUS_RUNNING',
  completed: 'RUN_STATUS_COMPLETED',
  failed: 'RUN_STATUS_FAILED',
};

const OMISSION_REASON: Record<OmissionReason, string> = {
  stale: 'OMISSION_REASON_STALE',
  orphan_call: 'OMISSION_REASON_ORPHAN_CALL',
  orphan_result: 'OMISSION_REASON_ORPHAN_RESULT',
  run_failed: 'OMISSION_REASON_RUN_FAILED',
  run_incomplete: 'OMISSION_REASON_RUN_INCOMPLETE',
  trailing_unsent: 'OMISSION_REASON_TRAILING_UNSENT',
  policy_skipped: 'OMISSION_REASON_POLICY_SKIPPED',
  invalidated: 'OMISSION_REASON_INVALIDATED',
  token_budget: 'OMISSION_REASON_TOKEN_BUDGET',
  awaiting_approval: 'OMISSION_REASON_AWAITING_APPROVAL',
  awaiting_result: 'OMISSION_REASON_AWAITING_RESULT',
  off_branch: 'OMISSION_REASON_OFF_BRANCH',
};

const APPROVAL_STATUS: Record<ApprovalState, string> = {
  none: 'APPROVAL_STATUS_NONE',
  pending: 'APPROVAL_STATUS_PENDING',
  approved: 'APPROVAL_STATUS_APPROVED',
  denied: 'APPROVAL_STATUS_DENIED',
};

const REASONING_OMISSION: Record<ReasoningOmission, string> = {
  none: 'REASONING_OMISSION_UNSPECIFIED',
  other_provider: 'REASONING_OMISSION_OTHER_PROVIDER',
  other_model: 'REASONING_OMISSION_OTHER_MODEL',
  expired: 'REASONING_OMISSION_EXPIRED',
  policy_never: 'REASONING_OMISSION_POLICY_NEVER',
  format_has_none: 'REASONING_OMISSION_FORMAT_HAS_NONE',
};

/** A round's response (the model's text, the reasoning replayed with it and why not), on the wire. */
function responseFieldsOf(round: Pick<ReplayedRound, 'response' | 'reasoningPlaceholder'>) {
  const { response } = round;
  return {
    provider: response?.provider ?? '',
    model: response?.model ?? '',
    text: response?.text ?? '',
    reasoning_json: response?.reasoning === undefined ? '' : JSON.stringify(response.reasoning),
    call_signatures: response?.callSignatures ?? {},
    call_item_ids: response?.callItemIds ?? {},
    reasoning_omitted: REASONING_OMISSION[response?.reasoningOmitted ?? 'none'],
    reasoning_placeholder: round.reasoningPlaceholder === true,
  };
}

export function toResponse(history: ReplayHistory, view: ReplayView = 'all') {
  return {
    turns: history.turns.map((turn) => ({
      run_id: turn.runId,
      assistant_message_id: turn.assistantMessageId ?? '',
      status: RUN_STATUS[turn.status],
      rounds: (view === 'messages' ? [] : turn.rounds).map((round) => ({
        round_index: round.roundIndex,
        resumed_from_run_id: round.resumedFromRunId ?? '',
        ...responseFieldsOf(round),
        calls: round.calls.map((call) => ({
          tool_call_id: call.toolCallId,
          tool_name: call.toolName,
          arguments_json: JSON.stringify(call.arguments),
          result: call.result,
          is_error: call.isError,
          sequence_index: call.sequenceIndex,
          requested_at: isoToTimestamp(call.requestedAt),
          completed_at: call.completedAt === null ? null : isoToTimestamp(call.completedAt),
          expired: call.expired,
          invalidated_by: call.invalidatedBy ?? '',
          interrupted: call.interrupted,
          approval: APPROVAL_STATUS[call.approval],
          compacted_items: call.compactedItems,
        })),
      })),
      messages_json: view === 'structured' ? '' : JSON.stringify(turn.messages),
      after_message_id: turn.afterMessageId ?? '',
    })),
    omitted: history.omitted.map((o: Omission) => ({
      run_id: o.runId,
      round_index: o.roundIndex,
      sequence_index: o.sequenceIndex,
      tool_call_id: o.toolCallId,
      tool_name: o.toolName,
      reason: OMISSION_REASON[o.reason],
      invalidated_by: o.invalidatedBy ?? '',
    })),
    history_tokens: history.historyTokens,
    pending_approvals: history.pendingApprovals.map((p) => ({
      tool_call_id: p.toolCallId,
      tool_name: p.toolName,
      arguments_json: JSON.stringify(p.arguments),
      run_id: p.runId,
      requested_at: isoToTimestamp(p.requestedAt),
      reason: p.reason ?? '',
      round_index: p.roundIndex,
      sequence_index: p.sequenceIndex,
      round:
        p.round === undefined
          ? null
          : { round_index: p.round.roundIndex, resumed_from_run_id: '', calls: [], ...responseFieldsOf(p.round) },
    })),
  };
}

const INVOCATION_STATUS: Record<InvocationStatus, string> = {
  pending: 'INVOCATION_STATUS_PENDING',
  succeeded: 'INVOCATION_STATUS_SUCCEEDED',
  error: 'INVOCATION_STATUS_ERROR',
};

const PERSIST_MODE: Record<PersistMode, string> = {
  full: 'PERSIST_MODE_FULL',
  metadata: 'PERSIST_MODE_METADATA',
  none: 'PERSIST_MODE_NONE',
};

export function toInvocationMessage(record: InvocationRecord) {
  const pending = record.completedAt === null;
  return {
    tenant_id: record.tenantId,
    conversation_id: record.conversationId,
    run_id: record.runId,
    round_index: record.roundIndex,
    sequence_index: record.sequenceIndex,
    tool_call_id: record.toolCallId,
    tool_name: record.toolName ?? '',
    arguments_json: JSON.stringify(record.arguments ?? {}),
    result: pending ? '' : resultText(record.result ?? null),
    is_error: record.isError === true,
    requested_at: record.requestedAt ? isoToTimestamp(record.requestedAt) : null,
    completed_at: record.completedAt ? isoToTimestamp(record.completedAt) : null,
    duration_ms: record.durationMs === null ? undefined : record.durationMs,
    status: INVOCATION_STATUS[statusOf(record)],
    persist: PERSIST_MODE[record.persist],
    producer_redacted: record.producerRedacted,
    argument_redactions: record.argumentRedactions,
    result_redactions: record.resultRedactions,
    trace_id: record.traceId ?? '',
    approval: APPROVAL_STATUS[approvalAsOf(record)],
    approval_decided_by: record.approvalDecidedBy ?? '',
    approval_decided_at: record.approvalDecidedAt ? isoToTimestamp(record.approvalDecidedAt) : null,
    approval_request_reason: record.approvalRequestReason ?? '',
    approval_decision_reason: record.approvalDecisionReason ?? '',
    arguments_original_bytes: record.argumentsBytes ?? undefined,
    result_original_bytes: record.resultBytes ?? undefined,
    result_run_id: record.resultRunId ?? '',
    forked_from: record.forkedFrom
      ? { conversation_id: record.forkedFrom.conversationId, position: record.forkedFrom.position }
      : undefined,
    reasoning_bytes: record.reasoningBytes ?? 0,
  };
}

export function toUsageResponse(report: UsageReport) {
  return {
    rows: report.rows.map((r) => ({
      bucket_start: isoToTimestamp(r.bucketStart),
      tool_name: r.toolName,
      calls: r.calls,
      errors: r.errors,
      p50_duration_ms: r.p50DurationMs ?? undefined,
      p95_duration_ms: r.p95DurationMs ?? undefined,
    })),
    input_tokens: report.inputTokens,
    output_tokens: report.outputTokens,
  };
}

const SEARCH_HIT_FIELD: Record<SearchHitField, string> = {
  toolName: 'SEARCH_HIT_FIELD_TOOL_NAME',
  arguments: 'SEARCH_HIT_FIELD_ARGUMENTS',
  result: 'SEARCH_HIT_FIELD_RESULT',
};

export function toSearchResponse(hits: SearchHit[]) {
  return {
    hits: hits.map((hit) => ({
      invocation: toInvocationMessage(hit.invocation),
      score: hit.score,
      snippet: hit.snippet,
      matched_in: hit.matchedIn.map((field) => SEARCH_HIT_FIELD[field]),
    })),
  };
}

/** A search's match mode; UNSPECIFIED means words. */
export const searchMatchOf = (value: string | number | undefined): SearchMatch =>
  enumOf<SearchMatch>('match', value, { SEARCH_MATCH_WORDS: 'words', SEARCH_MATCH_SUBSTRING: 'substring' }, 'words');

/** A request's status filter; UNSPECIFIED means any status. */
export const invocationStatusOf = (value: string | number | undefined): InvocationStatus | undefined =>
  enumOf<InvocationStatus | undefined>(
    'status',
    value,
    Object.fromEntries(Object.entries(INVOCATION_STATUS).map(([status, name]) => [name, status as InvocationStatus])),
    undefined,
  );

export const usageBucketOf = (value: string | number | undefined): UsageBucket =>
  enumOf<UsageBucket>('bucket', value, { USAGE_BUCKET_HOUR: 'hour', USAGE_BUCKET_DAY: 'day' }, 'hour');

export function toRecordedEventMessage(recorded: RecordedToolEvent) {
  const { event } = recorded;
  return {
    position: recorded.globalPosition,
    event_id: event.eventId,
    type: event.type,
    tenant_id: event.tenantId,
    conversation_id: event.conversationId,
    run_id: event.runId,
    occurred_at: isoToTimestamp(event.occurredAt),
    recorded_at: isoToTimestamp(recorded.recordedAt),
    // The payload in clear, as recorded; where it rested (sealed, its key) is the service's own business.
    payload_json: JSON.stringify(withoutSealNote(event)),
    stream_position: recorded.streamPosition,
  };
}
