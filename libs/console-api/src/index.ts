/**
 * The JSON the audit console's HTTP API answers (`/api/v1/...`): the one
 * description both the service's controllers and the browser app compile
 * against. Types only, so the browser bundle takes nothing from the server.
 */

export type InvocationStatus = 'pending' | 'succeeded' | 'error';
export type RunStatus = 'running' | 'completed' | 'failed' | 'unknown';

/** Who the console is talking as; `tenants: '*'` for every tenant. */
export interface ConsoleCaller {
  subject: string;
  tenants: '*' | string[];
  scopes: string[];
  /** false when the service runs without authentication (loopback or AUTH_MODE=none). */
  authenticated: boolean;
}

/** An invocation as stored: values are the redacted ones, with the count of markers per kind. */
export interface InvocationView {
  conversationId: string;
  runId: string;
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string | null;
  status: InvocationStatus;
  at: string;
  requestedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  arguments: unknown;
  result: unknown;
  persist: string;
  argumentRedactions: Record<string, number>;
  resultRedactions: Record<string, number>;
  traceId: string | null;
}

export type ReplayVerdictView =
  { kept: true; expired: boolean; invalidatedBy?: string } | { kept: false; reason: string; invalidatedBy?: string };

export interface TimelineCallView {
  invocation: InvocationView;
  replay: ReplayVerdictView;
}

export interface TimelineRunView {
  runId: string;
  /** As stored now; replay's verdicts, not this, follow the as-of moment. */
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  finishReason: string | null;
  error: { code: string | null; message: string | null } | null;
  rounds: { roundIndex: number; calls: TimelineCallView[] }[];
}

/** GET /api/v1/tenants/:tenant/conversations/:conversation/timeline?asOf= */
export interface ConversationTimelineView {
  tenantId: string;
  conversationId: string;
  /** The moment replay was asked about (ISO-8601). */
  asOf: string;
  /** The span of the recorded invocations, for the as-of slider. */
  firstAt: string | null;
  lastAt: string | null;
  runs: TimelineRunView[];
  /** Calls replay kept, left out, and calls not yet recorded at `asOf`. */
  kept: number;
  omitted: number;
  notYetRecorded: number;
  historyTokens: number;
  /** More invocations are stored than the timeline shows. */
  truncated: boolean;
}

/** An invocation as it stands, with the status of the run that made the call. */
export interface WatchedInvocationView {
  invocation: InvocationView;
  runStatus: RunStatus;
}

/**
 * GET /api/v1/tenants/:tenant/conversations/:conversation/watch, a
 * text/event-stream: each server-sent event's name and its JSON `data`.
 * First `snapshot` parts (the last one `complete`), then one `change` per
 * recorded event; `ended` before the stream closes (erased, or the service
 * shutting down: watch again). A run's end also ends the `running` status
 * of its invocations.
 */
export type ConversationWatchEvent =
  | { event: 'snapshot'; data: { invocations: WatchedInvocationView[]; complete: boolean } }
  | {
      event: 'change';
      data:
        | { kind: 'invocation_changed'; position: string; eventType: string; invocation: WatchedInvocationView }
        | { kind: 'run_ended'; position: string; runId: string; status: 'completed' | 'failed'; endedAt: string };
    }
  | { event: 'ended'; data: { reason: 'erased' | 'shutdown'; message: string } };

/** GET /api/v1/tenants/:tenant/search?q=&match=words|substring */
export interface SearchResultsView {
  /** matchedIn: where the query matched, in this order: 'toolName', 'arguments', 'result'. */
  hits: { invocation: InvocationView; score: number; snippet: string; matchedIn: ('toolName' | 'arguments' | 'result')[] }[];
}

/** GET /api/v1/tenants/:tenant/usage?from=&to=&bucket= */
export interface UsageView {
  bucket: 'hour' | 'day';
  from: string;
  to: string;
  rows: {
    bucketStart: string;
    toolName: string;
    calls: number;
    errors: number;
    p50DurationMs: number | null;
    p95DurationMs: number | null;
  }[];
  inputTokens: number;
  outputTokens: number;
}

/** GET /api/v1/dead-letters?code=&since= (every tenant's: operators only) */
export interface DeadLettersView {
  letters: {
    place: string;
    errorCode: string;
    reason: string;
    deadLetteredAt: string;
    original: { topic: string; partition: number; offset: string; timestamp: string };
    key: string | null;
    /** The message as dead-lettered (every detector applied), as text; null for a stub. */
    value: string | null;
    stub: boolean;
    redriven: boolean;
  }[];
}

/** Every error answer of the API. */
export interface ApiErrorView {
  statusCode: number;
  code: string;
  message: string;
}
