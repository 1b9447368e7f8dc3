import {
  credentials,
  Metadata,
  status as GrpcStatus,
  type CallOptions,
  type ChannelCredentials,
  type ClientOptions,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  EraseConversationRequest,
  type EraseConversationResponse,
  ForkConversationRequest,
  type ForkConversationResponse,
  GetReplayHistoryRequest,
  GetUsageRequest,
  type GetUsageResponse,
  HistoryFormat,
  type Invocation,
  InvocationStatus,
  ListToolInvocationsRequest,
  type RecordedEvent,
  SearchMatch,
  SearchToolHistoryRequest,
  type SearchToolHistoryResponse,
  ReplayView,
  StaleResultMode,
  SubscribeToolEventsRequest,
  WatchConversationRequest,
  type ConversationChange,
  ToolHistoryClient as GeneratedClient,
  UsageBucket,
} from './generated/toolhistory/v1/toolhistory';
import { type HistoryFormatName, type HistoryMessages, HISTORY_FORMAT_NAMES } from './history-formats';
import { type ReplayHistory, replayHistoryOf } from './replay-response';
import type { ToolEvent, ToolEventType } from './tool-event-types';
import { pause, reconnectDelayMs } from './reconnect-backoff';
import { DEFAULT_MAX_ATTEMPTS, retryDelayMs } from './pushback';
import { ToolHistoryError } from './tool-history-errors';
import { rememberConsistencyToken, tokenForRead } from './consistency-tokens';
import { hostBranch, spliceHistory } from './splice-history';

/**
 * A replay response is commonly larger than HTTP/2's 64 KiB default window:
 * with it, each response waits on the caller to grant more, a round trip per
 * 64 KiB. The window is a limit on what may be in flight, not memory taken.
 */
export const DEFAULT_CHANNEL_OPTIONS: Readonly<ClientOptions> = Object.freeze({ 'grpc-node.flow_control_window': 16 * 1024 * 1024 });

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
}

export type HistoryView = 'all' | 'messages' | 'structured';

const WIRE_VIEW: Record<HistoryView, ReplayView> = {
  all: ReplayView.REPLAY_VIEW_UNSPECIFIED,
  messages: ReplayView.REPLAY_VIEW_MESSAGES,
  structured: ReplayView.REPLAY_VIEW_STRUCTURED,
};

export type { ReplayedTurn, ReplayHistory } from './replay-response';

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

const WIRE_FORMAT: Record<HistoryFormatName, HistoryFormat> = {
  openai: HistoryFormat.HISTORY_FORMAT_OPENAI_CHAT,
  anthropic: HistoryFormat.HISTORY_FORMAT_ANTHROPIC_MESSAGES,
  // Built here from the structured rounds; the OpenAI messages of the response are not used.
  'ai-sdk': HistoryFormat.HISTORY_FORMAT_OPENAI_CHAT,
  'openai-responses': HistoryFormat.HISTORY_FORMAT_OPENAI_RESPONSES,
  gemini: HistoryFormat.HISTORY_FORMAT_GEMINI,
  'bedrock-converse': HistoryFormat.HISTORY_FORMAT_BEDROCK_CONVERSE,
};

const WIRE_STATUS = {
  pending: InvocationStatus.INVOCATION_STATUS_PENDING,
  succeeded: InvocationStatus.INVOCATION_STATUS_SUCCEEDED,
  error: InvocationStatus.INVOCATION_STATUS_ERROR,
} as const;

const DEFAULT_TIMEOUT_MS = 10_000;
const ERASE_TIMEOUT_MS = 30_000;

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

/**
 * The ToolHistory gRPC API for agent workers, audit and billing: typed
 * requests and responses (generated from the proto), a bearer token on
 * every call, a deadline on every unary call, and ToolHistoryError with the
 * gRPC status for every failure.
 */
export class ToolHistoryClient {
  private readonly stub: GeneratedClient;
  private readonly defaultTimeoutMs: number;
  private readonly maxAttempts: number;

  constructor(private readonly options: ToolHistoryClientOptions) {
    if (typeof options?.address !== 'string' || options.address.length === 0) throw new TypeError('address is required (host:port)');
    if (options.token !== undefined && options.tls === undefined && !options.allowTokenWithoutTls && !isLoopback(options.address)) {
      throw new TypeError(
        `token: a bearer token is not sent in the clear to ${options.address}: set tls, or allowTokenWithoutTls when something else encrypts the connection`,
      );
    }
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxAttempts = options.retry?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1))
      throw new TypeError(`retry.maxAttempts: ${maxAttempts} is not a whole number, 1 or more`);
    this.maxAttempts = maxAttempts;
    this.stub = new GeneratedClient(options.address, channelCredentials(options.tls), {
      ...DEFAULT_CHANNEL_OPTIONS,
      ...options.channelOptions,
    });
  }

  close(): void {
    this.stub.close();
  }

  /** The tool-call history the model may see again, in `format`, with every omission explained. */
  async getReplayHistory<F extends HistoryFormatName>(request: ReplayHistoryRequest<F>): Promise<ReplayHistory<HistoryMessages[F]>> {
    const window = request.freshnessWindowSeconds;
    if (window !== undefined && !(Number.isSafeInteger(window) && window >= 0)) {
      throw new TypeError(`freshnessWindowSeconds: ${window} is not a whole number of seconds, 0 or more`);
    }
    const budget = request.maxHistoryTokens;
    if (budget !== undefined && !(Number.isInteger(budget) && budget >= 0 && budget <= 2_147_483_647)) {
      throw new TypeError(`maxHistoryTokens: ${budget} is not a whole number of tokens, 0 to 2147483647`);
    }
    if (!HISTORY_FORMAT_NAMES.includes(request.format)) {
      throw new TypeError(`format: ${JSON.stringify(request.format)} is not one of ${HISTORY_FORMAT_NAMES.join(', ')}`);
    }
    const view = request.view ?? (request.format === 'ai-sdk' ? 'structured' : 'all');
    if (!Object.hasOwn(WIRE_VIEW, view))
      throw new TypeError(`view: ${JSON.stringify(view)} is not one of ${Object.keys(WIRE_VIEW).join(', ')}`);
    // ai-sdk messages are made here from the rounds; without them there would be none.
    if (request.format === 'ai-sdk' && view === 'messages')
      throw new TypeError('view: "messages" cannot give ai-sdk messages (they are made from the rounds)');
    const response = await this.unary(
      'GetReplayHistory',
      this.stub.getReplayHistory,
      GetReplayHistoryRequest.fromPartial({
        tenantId: request.tenantId,
        conversationId: request.conversationId,
        channel: request.channel,
        asOf: request.asOf,
        format: WIRE_FORMAT[request.format],
        freshnessWindowSeconds: request.freshnessWindowSeconds === undefined ? undefined : String(request.freshnessWindowSeconds),
        staleResults:
          request.staleResults === 'placeholder'
            ? StaleResultMode.STALE_RESULT_MODE_PLACEHOLDER
            : request.staleResults === 'drop'
              ? StaleResultMode.STALE_RESULT_MODE_DROP
              : StaleResultMode.STALE_RESULT_MODE_UNSPECIFIED,
        view: WIRE_VIEW[view],
        maxHistoryTokens: budget,
        consistencyToken: tokenForRead(request.consistencyToken, request),
        branchMessageIds: [...(request.branchMessageIds ?? [])],
      }),
      request,
    );
    return replayHistoryOf(response, request.format);
  }

  /**
   * The host's messages with the replayed tool history spliced in where the
   * model saw it (spliceHistory), for the host's current branch: the ids of
   * `hostMessages` (`idOf`, default the message's own `id`) are sent as
   * `branchMessageIds`, so runs of a regenerated answer or of an edited
   * message stay out. The same consistency token as getReplayHistory.
   */
  async splicedHistory<F extends HistoryFormatName, H>(
    request: Omit<ReplayHistoryRequest<F>, 'branchMessageIds'> & { hostMessages: readonly H[]; idOf?: (message: H) => string | undefined },
  ): Promise<Array<H | HistoryMessages[F]>> {
    const { hostMessages, idOf = defaultIdOf, ...replay } = request;
    const history = await this.getReplayHistory({ ...replay, branchMessageIds: hostBranch(hostMessages, idOf) });
    return spliceHistory(hostMessages, history.turns, idOf);
  }

  /**
   * Every invocation that matches, page after page, in the service's stable
   * order; each with its approval (`approval`, `approvalDecidedBy`,
   * `approvalDecidedAt`, the reasons), the sizes its payloads had before the
   * producer cut them (`argumentsOriginalBytes`, `resultOriginalBytes`) and
   * the run that recorded the result when later than the call's (`resultRunId`).
   */
  async *listToolInvocations(filter: InvocationFilter): AsyncGenerator<Invocation, void, undefined> {
    let pageToken = '';
    do {
      const page = await this.unary(
        'ListToolInvocations',
        this.stub.listToolInvocations,
        ListToolInvocationsRequest.fromPartial({
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
        }),
        filter,
      );
      yield* page.invocations;
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  /** Calls, errors and durations per tool and bucket, and the tokens of the runs completed in the period. */
  getUsage(request: UsageRequest): Promise<GetUsageResponse> {
    return this.unary(
      'GetUsage',
      this.stub.getUsage,
      GetUsageRequest.fromPartial({
        tenantId: request.tenantId,
        from: request.from,
        to: request.to,
        bucket: request.bucket === 'day' ? UsageBucket.USAGE_BUCKET_DAY : UsageBucket.USAGE_BUCKET_HOUR,
      }),
      request,
    );
  }

  /** Search over the tenant's (redacted) tool history: by words, best first, or by substring, newest first. */
  searchToolHistory(request: SearchRequest): Promise<SearchToolHistoryResponse> {
    return this.unary(
      'SearchToolHistory',
      this.stub.searchToolHistory,
      SearchToolHistoryRequest.fromPartial({
        tenantId: request.tenantId,
        query: request.query,
        match: request.match === 'substring' ? SearchMatch.SEARCH_MATCH_SUBSTRING : SearchMatch.SEARCH_MATCH_WORDS,
        conversationId: request.conversationId,
        limit: request.limit,
        from: request.from,
        to: request.to,
        consistencyToken: tokenForRead(request.consistencyToken, request),
      }),
      request,
    );
  }

  /**
   * A new conversation that starts with the source's history up to and
   * including the run of `upToMessageId` (a user or an assistant message of
   * it), for a host that branches a chat. Reads of the new conversation in
   * this process wait for the whole fork; elsewhere, pass the answer's
   * `consistencyToken`. Needs the scope conversations:fork.
   */
  async forkConversation(
    request: { tenantId: string; conversationId: string; upToMessageId: string; newConversationId: string } & CallControl & ReadYourWrites,
  ): Promise<ForkConversationResponse> {
    const response = await this.unary(
      'ForkConversation',
      this.stub.forkConversation,
      ForkConversationRequest.fromPartial({
        tenantId: request.tenantId,
        conversationId: request.conversationId,
        upToMessageId: request.upToMessageId,
        newConversationId: request.newConversationId,
        // The source's events this process published are recorded before the fork is made.
        consistencyToken: tokenForRead(request.consistencyToken, request),
      }),
      { timeoutMs: request.timeoutMs ?? ERASE_TIMEOUT_MS, signal: request.signal },
    );
    if (response.consistencyToken !== '') {
      rememberConsistencyToken({ tenantId: request.tenantId, conversationId: request.newConversationId }, response.consistencyToken);
    }
    return response;
  }

  /** Removes a conversation from the event store and the read model. */
  eraseConversation(request: { tenantId: string; conversationId: string } & CallControl): Promise<EraseConversationResponse> {
    return this.unary(
      'EraseConversation',
      this.stub.eraseConversation,
      EraseConversationRequest.fromPartial({ tenantId: request.tenantId, conversationId: request.conversationId }),
      { timeoutMs: request.timeoutMs ?? ERASE_TIMEOUT_MS, signal: request.signal },
    );
  }

  /**
   * The tenant's recorded events after `fromPosition`, then live ones, for
   * as long as the consumer iterates: `break` (or the signal) ends the
   * stream. Remember each event's `position` to resume without a gap or a
   * duplicate. No deadline: a subscription is meant to stay open. With
   * `reconnect`, a stream that ends UNAVAILABLE (the service restarting or
   * shutting down, the network dropping) is opened again after the last
   * position delivered, with backoff, until the consumer stops.
   */
  async *subscribe(request: SubscribeRequest): AsyncGenerator<SubscribedEvent, void, undefined> {
    let position = request.fromPosition === undefined ? '0' : String(request.fromPosition);
    let failures = 0;
    for (;;) {
      try {
        for await (const recorded of this.openSubscription(request, position)) {
          failures = 0;
          position = recorded.position;
          yield recorded;
        }
        return;
      } catch (error) {
        const resumable = request.reconnect === true && error instanceof ToolHistoryError && error.code === GrpcStatus.UNAVAILABLE;
        if (!resumable) throw error;
        if (!(await pause(reconnectDelayMs(failures++), request.signal))) return;
      }
    }
  }

  private async *openSubscription(request: SubscribeRequest, fromPosition: string): AsyncGenerator<SubscribedEvent, void, undefined> {
    const metadata = await this.metadata();
    // Checked after the token is fetched: an abort meanwhile has no listener to hear it.
    if (request.signal?.aborted) return;
    const call = this.stub.subscribeToolEvents(
      SubscribeToolEventsRequest.fromPartial({ tenantId: request.tenantId, fromPosition, types: request.types ?? [] }),
      metadata,
    );
    let cancelledHere = false;
    const cancel = () => {
      cancelledHere = true;
      call.cancel();
    };
    request.signal?.addEventListener('abort', cancel, { once: true });
    try {
      for await (const recorded of call as AsyncIterable<RecordedEvent>) {
        yield { ...recorded, event: JSON.parse(recorded.payloadJson) as ToolEvent };
      }
    } catch (error) {
      if (cancelledHere && request.signal?.aborted) return;
      throw isServiceError(error) ? ToolHistoryError.fromServiceError('SubscribeToolEvents', error) : error;
    } finally {
      request.signal?.removeEventListener('abort', cancel);
      // The consumer stopped early (break, return, throw): end the server stream; its CANCELLED status is expected.
      call.on('error', () => undefined);
      cancel();
    }
  }

  /**
   * One conversation live: first its invocations as they stand (snapshot
   * parts, the last one `complete`), then one change per event recorded
   * after that, for as long as the caller iterates (`break` or the signal
   * ends it). A RunEnded also ends the `running` status of that run's
   * invocations. Erasure ends it with NOT_FOUND; UNAVAILABLE (the service
   * going away) calls for watching again, which starts with a new snapshot.
   */
  async *watchConversation(
    request: { tenantId: string; conversationId: string } & ReadYourWrites,
    control: { signal?: AbortSignal } = {},
  ): AsyncGenerator<ConversationChange, void, undefined> {
    const metadata = await this.metadata();
    if (control.signal?.aborted) return;
    const call = this.stub.watchConversation(
      WatchConversationRequest.fromPartial({
        tenantId: request.tenantId,
        conversationId: request.conversationId,
        consistencyToken: tokenForRead(request.consistencyToken, request),
      }),
      metadata,
    );
    let cancelledHere = false;
    const cancel = () => {
      cancelledHere = true;
      call.cancel();
    };
    control.signal?.addEventListener('abort', cancel, { once: true });
    try {
      yield* call as AsyncIterable<ConversationChange>;
    } catch (error) {
      if (cancelledHere && control.signal?.aborted) return;
      throw isServiceError(error) ? ToolHistoryError.fromServiceError('WatchConversation', error) : error;
    } finally {
      control.signal?.removeEventListener('abort', cancel);
      call.on('error', () => undefined);
      cancel();
    }
  }

  /**
   * One unary call within one deadline: tried again, within that deadline,
   * when the service refuses it as busy and says when to come back.
   */
  private async unary<Req, Res>(method: string, fn: UnaryMethod<Req, Res>, request: Req, control: CallControl): Promise<Res> {
    // The deadline covers fetching the token too: a slow identity provider must not hold a turn past it.
    const deadline = new Date(Date.now() + (control.timeoutMs ?? this.defaultTimeoutMs));
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.attempt(method, fn, request, control, deadline);
      } catch (error) {
        if (!(error instanceof ToolHistoryError)) throw error;
        const wait = retryDelayMs(
          { code: error.code, pushbackMs: error.retryAfterMs },
          attempt,
          this.maxAttempts,
          deadline.getTime() - Date.now(),
        );
        if (wait === undefined) throw error;
        if (!(await pause(wait, control.signal)))
          throw new ToolHistoryError(GrpcStatus.CANCELLED, 'cancelled by the caller', method, { cause: control.signal?.reason });
      }
    }
  }

  private async attempt<Req, Res>(
    method: string,
    fn: UnaryMethod<Req, Res>,
    request: Req,
    control: CallControl,
    deadline: Date,
  ): Promise<Res> {
    const metadata = await this.metadataBefore(deadline, control.signal, method);
    return new Promise<Res>((resolve, reject) => {
      const call = fn.call(this.stub, request, metadata, { deadline }, (error, response) => {
        control.signal?.removeEventListener('abort', onAbort);
        if (error) reject(ToolHistoryError.fromServiceError(method, error));
        else resolve(response);
      });
      const onAbort = () => call.cancel();
      control.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The call's headers, or DEADLINE_EXCEEDED / CANCELLED when the deadline passes or the signal aborts while the token is fetched. */
  private metadataBefore(deadline: Date, signal: AbortSignal | undefined, method: string): Promise<Metadata> {
    const cancelled = () => new ToolHistoryError(GrpcStatus.CANCELLED, 'cancelled by the caller', method, { cause: signal?.reason });
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise<Metadata>((resolve, reject) => {
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = () => settle(() => reject(cancelled()));
      const timer = setTimeout(
        () =>
          settle(() => reject(new ToolHistoryError(GrpcStatus.DEADLINE_EXCEEDED, 'the token was not fetched before the deadline', method))),
        Math.max(0, deadline.getTime() - Date.now()),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.metadata().then(
        (metadata) => settle(() => resolve(metadata)),
        (error: unknown) => settle(() => reject(error)),
      );
    });
  }

  private async metadata(): Promise<Metadata> {
    const metadata = new Metadata();
    const { token } = this.options;
    if (token !== undefined) metadata.set('authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
    return metadata;
  }
}

function defaultIdOf(message: unknown): string | undefined {
  const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

function channelCredentials(tls: ToolHistoryClientOptions['tls']): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  if (tls === true) return credentials.createSsl();
  const buffer = (value: Buffer | string | undefined) => (value === undefined ? null : Buffer.from(value));
  return credentials.createSsl(buffer(tls.ca), buffer(tls.key), buffer(tls.cert));
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number' && 'metadata' in error;
}

/** host:port names this machine: 127.0.0.0/8, ::1 or localhost. */
function isLoopback(address: string): boolean {
  const host = address
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
