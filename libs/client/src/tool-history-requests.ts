import type { ClientOptions } from '@grpc/grpc-js';
import {
  GetReplayHistoryRequest,
  GetUsageRequest,
  InvocationStatus,
  ListToolInvocationsRequest,
  type RecordedEvent,
  ReplayView,
  SearchMatch,
  SearchToolHistoryRequest,
  StaleResultMode,
  UsageBucket,
} from './generated/toolhistory/v1/toolhistory';
import { CLIENT_HISTORY_FORMATS, HISTORY_FORMAT_NAMES, type HistoryFormatName } from './history-formats';
import { providerOfAiSdkModel } from './ai-sdk-reasoning';
import type { ToolEvent, ToolEventType } from './tool-event-types';
import { tokenForRead } from './consistency-tokens';

/** A bearer token, or a function that returns a current one (called before every call, so it may refresh). */
export type TokenSource = string | (() => string | Promise<string>);

export interface ToolHistoryClientOptions {
  /** host:port of the service. */
  address: string;
  token?: TokenSource;
  /** TLS (plaintext without it): trust `ca` (default: the system's roots); `cert` and `key` present a client certificate (mTLS). */
  tls?: { ca?: Buffer | string; cert?: Buffer | string; key?: Buffer | string } | true;
  /** The deadline of a call that names none; default 10 s (30 s for an erasure). */
  defaultTimeoutMs?: number;
  /** grpc-js channel options (keepalive, message size, ...), over DEFAULT_CHANNEL_OPTIONS. */
  channelOptions?: ClientOptions;
  /** A token is sent in the clear only to a loopback address unless this says so (e.g. a sidecar that adds TLS). */
  allowTokenWithoutTls?: boolean;
  /**
   * A unary call the service refuses as busy (RESOURCE_EXHAUSTED with a
   * `grpc-retry-pushback-ms` trailer) is tried again after that pushback,
   * plus up to half of it at random, while the call's deadline leaves time:
   * at most `maxAttempts` attempts in all (default 3; 1: never again).
   */
  retry?: { maxAttempts?: number };
}

/** Every call takes these: a deadline and a signal that cancels it. */
export interface CallControl {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Reads of one conversation take this: answer only once the events it names are recorded. */
export interface ReadYourWrites {
  /**
   * What publishing answered (PublishedEvent.consistencyToken): the answer
   * includes every event through it, or the call fails UNAVAILABLE before
   * its deadline (never an answer that silently lacks them). Default: the
   * last token this process published for the conversation; '' for none.
   */
  consistencyToken?: string;
}

export interface ReplayHistoryRequest<F extends HistoryFormatName> extends CallControl, ReadYourWrites {
  tenantId: string;
  conversationId: string;
  /** Default: the channel recorded for the conversation. */
  channel?: string;
  /** Whose API's messages each turn carries (see HistoryMessages): `openai`, `anthropic`, `ai-sdk`, `openai-responses`, `gemini`, `bedrock-converse`. */
  format: F;
  /** Default: now. */
  asOf?: Date;
  /** Replaces every configured freshness window for this request. */
  freshnessWindowSeconds?: number;
  /** `placeholder` keeps a stale pair and says the result expired; default: as the policy says. */
  staleResults?: 'drop' | 'placeholder';
  /**
   * What each turn carries besides its parsed `messages`. `all` (default for
   * every format but `ai-sdk`): also the structured `rounds`, which
   * `toLangChainMessages` and other converters read. `messages`: the provider
   * messages only (each turn's `rounds` is empty), about half the bytes on the
   * wire, for a caller that splices `messages`. `structured`: `rounds` only,
   * which is all `ai-sdk` needs (its default).
   */
  view?: HistoryView;
  /**
   * The most tokens (o200k_base) the replayed tool calls and results may
   * take; over it, whole rounds leave, oldest first (each call in `omitted`
   * as OMISSION_REASON_TOKEN_BUDGET). Default: the policy's budget, if any.
   */
  maxHistoryTokens?: number;
  /**
   * The host's current path of message ids, oldest first (its user and
   * assistant messages, as the events name them): runs whose answer was
   * regenerated, or that followed an edited message, are left out
   * (OMISSION_REASON_OFF_BRANCH). Default: every run counts.
   */
  branchMessageIds?: readonly string[];
  /**
   * The model the host is about to call: a round's reasoning recorded for
   * another model stays out (the round's `reasoningOmitted` is
   * REASONING_OMISSION_OTHER_MODEL). Default: any model of the provider.
   */
  model?: string;
  /**
   * The provider the host is about to call (`openai`, `anthropic`, `google`,
   * `bedrock`, or another name), for a format that names none: the rounds of
   * `ai-sdk` (and `openai`) then carry that provider's reasoning, which
   * `ai-sdk` hands back as the SDK's `reasoning` parts. For `ai-sdk` it may
   * be the model's own `provider` id (`google.vertex.chat`,
   * `anthropic.messages`): the parts' options then go under the key that
   * provider package reads (Google Vertex's `vertex`). Any other format is
   * its provider's own: leave it out (the service refuses another).
   */
  provider?: string;
}

export type HistoryView = 'all' | 'messages' | 'structured';

export const WIRE_VIEW: Record<HistoryView, ReplayView> = {
  all: ReplayView.REPLAY_VIEW_UNSPECIFIED,
  messages: ReplayView.REPLAY_VIEW_MESSAGES,
  structured: ReplayView.REPLAY_VIEW_STRUCTURED,
};

export interface InvocationFilter extends CallControl, ReadYourWrites {
  tenantId: string;
  conversationId?: string;
  runId?: string;
  toolName?: string;
  status?: 'pending' | 'succeeded' | 'error';
  from?: Date;
  to?: Date;
  /** Invocations fetched per request; default 100, at most 1,000. */
  pageSize?: number;
}

export interface UsageRequest extends CallControl {
  tenantId: string;
  from: Date;
  to: Date;
  bucket?: 'hour' | 'day';
}

export interface SearchRequest extends CallControl, ReadYourWrites {
  tenantId: string;
  query: string;
  /**
   * `words` (default): free text, whole words, best first. `substring`: the
   * query is one literal text (at least 3 characters) found anywhere, in any
   * case, newest first. Each hit's `matchedIn` says where it matched.
   */
  match?: 'words' | 'substring';
  /** The conversation to search in: required for a token with history:read but not audit:read. */
  conversationId?: string;
  limit?: number;
  from?: Date;
  to?: Date;
}

export interface SubscribeRequest {
  tenantId: string;
  /** The last position seen; 0 or unset: from the start. */
  fromPosition?: bigint | string | number;
  types?: ToolEventType[];
  signal?: AbortSignal;
  /** Open the stream again after the last position delivered when it ends UNAVAILABLE; default false (the error is thrown). */
  reconnect?: boolean;
}

/** A recorded event as the subscription delivers it, with its payload parsed. */
export interface SubscribedEvent extends RecordedEvent {
  event: ToolEvent;
}

export const WIRE_STATUS = {
  pending: InvocationStatus.INVOCATION_STATUS_PENDING,
  succeeded: InvocationStatus.INVOCATION_STATUS_SUCCEEDED,
  error: InvocationStatus.INVOCATION_STATUS_ERROR,
} as const;

/**
 * The GetReplayHistory request of a ReplayHistoryRequest, its arguments
 * checked first (a TypeError names the one that is wrong): the format's
 * wire value (the client's formats table), and the view, by default the
 * one its turns are read from.
 */
export function replayRequestOf<F extends HistoryFormatName>(request: ReplayHistoryRequest<F>): GetReplayHistoryRequest {
  const window = request.freshnessWindowSeconds;
  if (window !== undefined && !(Number.isSafeInteger(window) && window >= 0)) {
    throw new TypeError(`freshnessWindowSeconds: ${window} is not a whole number of seconds, 0 or more`);
  }
  const budget = request.maxHistoryTokens;
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 0 && budget <= 2_147_483_647)) {
    throw new TypeError(`maxHistoryTokens: ${budget} is not a whole number of tokens, 0 to 2147483647`);
  }
  return GetReplayHistoryRequest.fromPartial({
    tenantId: request.tenantId,
    conversationId: request.conversationId,
    channel: request.channel,
    asOf: request.asOf,
    format: formatOf(request.format).wire,
    freshnessWindowSeconds: request.freshnessWindowSeconds === undefined ? undefined : String(request.freshnessWindowSeconds),
    staleResults: STALE_RESULTS[request.staleResults ?? 'policy'],
    view: WIRE_VIEW[viewOf(request)],
    maxHistoryTokens: budget,
    consistencyToken: tokenForRead(request.consistencyToken, request),
    branchMessageIds: [...(request.branchMessageIds ?? [])],
    model: request.model,
    provider:
      request.format === 'ai-sdk' && request.provider ? (providerOfAiSdkModel(request.provider) ?? request.provider) : request.provider,
  });
}

const STALE_RESULTS = {
  placeholder: StaleResultMode.STALE_RESULT_MODE_PLACEHOLDER,
  drop: StaleResultMode.STALE_RESULT_MODE_DROP,
  policy: StaleResultMode.STALE_RESULT_MODE_UNSPECIFIED,
} as const;

function formatOf(format: HistoryFormatName) {
  if (!HISTORY_FORMAT_NAMES.includes(format)) {
    throw new TypeError(`format: ${JSON.stringify(format)} is not one of ${HISTORY_FORMAT_NAMES.join(', ')}`);
  }
  return CLIENT_HISTORY_FORMATS[format];
}

/** The view asked for: the caller's, else `structured` for a format built from the rounds, `all` for the others. */
function viewOf(request: ReplayHistoryRequest<HistoryFormatName>): HistoryView {
  const builtHere = CLIENT_HISTORY_FORMATS[request.format].fromRounds !== undefined;
  const view = request.view ?? (builtHere ? 'structured' : 'all');
  if (!Object.hasOwn(WIRE_VIEW, view))
    throw new TypeError(`view: ${JSON.stringify(view)} is not one of ${Object.keys(WIRE_VIEW).join(', ')}`);
  // Messages made here from the rounds: without them there would be none.
  if (builtHere && view === 'messages') {
    throw new TypeError(`view: "messages" cannot give ${request.format} messages (they are made from the rounds)`);
  }
  return view;
}

/** A page of ListToolInvocations. */
export function invocationsRequestOf(filter: InvocationFilter, pageToken: string): ListToolInvocationsRequest {
  return ListToolInvocationsRequest.fromPartial({
    tenantId: filter.tenantId,
    conversationId: filter.conversationId,
    runId: filter.runId,
    toolName: filter.toolName,
    status: filter.status === undefined ? undefined : WIRE_STATUS[filter.status],
    from: filter.from,
    to: filter.to,
    pageSize: filter.pageSize,
    pageToken,
    consistencyToken: tokenForRead(filter.consistencyToken, filter),
  });
}

export function usageRequestOf(request: UsageRequest): GetUsageRequest {
  return GetUsageRequest.fromPartial({
    tenantId: request.tenantId,
    from: request.from,
    to: request.to,
    bucket: request.bucket === 'day' ? UsageBucket.USAGE_BUCKET_DAY : UsageBucket.USAGE_BUCKET_HOUR,
  });
}

export function searchRequestOf(request: SearchRequest): SearchToolHistoryRequest {
  return SearchToolHistoryRequest.fromPartial({
    tenantId: request.tenantId,
    query: request.query,
    match: request.match === 'substring' ? SearchMatch.SEARCH_MATCH_SUBSTRING : SearchMatch.SEARCH_MATCH_WORDS,
    conversationId: request.conversationId,
    limit: request.limit,
    from: request.from,
    to: request.to,
    consistencyToken: tokenForRead(request.consistencyToken, request),
  });
}
