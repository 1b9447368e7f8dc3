import { type ClientOptions, status as GrpcStatus } from '@grpc/grpc-js';
import {
  type ConversationChange,
  EraseConversationRequest,
  type EraseConversationResponse,
  ForkConversationRequest,
  type ForkConversationResponse,
  type GetUsageResponse,
  type Invocation,
  type RecordedEvent,
  type SearchToolHistoryResponse,
  SubscribeToolEventsRequest,
  ToolHistoryClient as GeneratedClient,
  WatchConversationRequest,
} from './generated/toolhistory/v1/toolhistory';
import { TENANT_METADATA_KEY } from '../../contract/src/request-metadata';
import { channelCredentials, isLoopback, metadataBefore, metadataOf, streamed, type UnaryMethod } from './grpc-calls';
import type { HistoryFormatName, HistoryMessages } from './history-formats';
import { type ReplayHistory, replayHistoryOf } from './replay-response';
import type { ToolEvent } from './tool-event-types';
import { pause, reconnectDelayMs } from './reconnect-backoff';
import { DEFAULT_MAX_ATTEMPTS, retryDelayMs } from './pushback';
import { ToolHistoryError } from './tool-history-errors';
import { rememberConsistencyToken, tokenForRead } from './consistency-tokens';
import { hostBranch, spliceHistory } from './splice-history';
import {
  type CallControl,
  invocationsRequestOf,
  type InvocationFilter,
  type ReadYourWrites,
  type ReplayHistoryRequest,
  replayRequestOf,
  type SearchRequest,
  searchRequestOf,
  type SubscribedEvent,
  type SubscribeRequest,
  type ToolHistoryClientOptions,
  type UsageRequest,
  usageRequestOf,
} from './tool-history-requests';

/**
 * A replay response is commonly larger than HTTP/2's 64 KiB default window:
 * with it, each response waits on the caller to grant more, a round trip per
 * 64 KiB. The window is a limit on what may be in flight, not memory taken.
 */
export const DEFAULT_CHANNEL_OPTIONS: Readonly<ClientOptions> = Object.freeze({ 'grpc-node.flow_control_window': 16 * 1024 * 1024 });

export type { ReplayedTurn, ReplayHistory } from './replay-response';
export type {
  CallControl,
  HistoryView,
  InvocationFilter,
  ReadYourWrites,
  ReplayHistoryRequest,
  SearchRequest,
  SubscribedEvent,
  SubscribeRequest,
  TokenSource,
  ToolHistoryClientOptions,
  UsageRequest,
} from './tool-history-requests';

const DEFAULT_TIMEOUT_MS = 10_000;
const ERASE_TIMEOUT_MS = 30_000;

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
    const response = await this.unary('GetReplayHistory', this.stub.getReplayHistory, replayRequestOf(request), request);
    return replayHistoryOf(response, request.format, request.provider);
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
      const page = await this.unary('ListToolInvocations', this.stub.listToolInvocations, invocationsRequestOf(filter, pageToken), filter);
      yield* page.invocations;
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  /** Calls, errors and durations per tool and bucket, and the tokens of the runs completed in the period. */
  getUsage(request: UsageRequest): Promise<GetUsageResponse> {
    return this.unary('GetUsage', this.stub.getUsage, usageRequestOf(request), request);
  }

  /** Search over the tenant's (redacted) tool history: by words, best first, or by substring, newest first. */
  searchToolHistory(request: SearchRequest): Promise<SearchToolHistoryResponse> {
    return this.unary('SearchToolHistory', this.stub.searchToolHistory, searchRequestOf(request), request);
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
    const metadata = await metadataOf(this.options.token);
    // Checked after the token is fetched: an abort meanwhile has no listener to hear it.
    if (request.signal?.aborted) return;
    const call = this.stub.subscribeToolEvents(
      SubscribeToolEventsRequest.fromPartial({ tenantId: request.tenantId, fromPosition, types: request.types ?? [] }),
      metadata,
    );
    for await (const recorded of streamed<RecordedEvent>(call, request.signal, 'SubscribeToolEvents')) {
      yield { ...recorded, event: JSON.parse(recorded.payloadJson) as ToolEvent };
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
    const metadata = await metadataOf(this.options.token);
    if (control.signal?.aborted) return;
    const call = this.stub.watchConversation(
      WatchConversationRequest.fromPartial({
        tenantId: request.tenantId,
        conversationId: request.conversationId,
        consistencyToken: tokenForRead(request.consistencyToken, request),
      }),
      metadata,
    );
    yield* streamed<ConversationChange>(call, control.signal, 'WatchConversation');
  }

  /**
   * One unary call within one deadline: tried again, within that deadline,
   * when the service refuses it as busy and says when to come back.
   */
  private async unary<Req, Res>(method: string, fn: UnaryMethod<Req, Res>, request: Req, control: CallControl): Promise<Res> {
    // The deadline covers fetching the token too: a slow identity provider must not hold a turn past it.
    const deadline = new Date(Date.now() + (control.timeoutMs ?? this.defaultTimeoutMs));
    // The tenant in the headers too: a flooded service refuses the read from them, before reading it.
    const tenantId = (request as { tenantId?: unknown }).tenantId;
    const tenant = typeof tenantId === 'string' && /^[\x20-\x7e]+$/.test(tenantId) ? tenantId : undefined;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.attempt(method, fn, request, control, deadline, tenant);
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
    tenant: string | undefined,
  ): Promise<Res> {
    const metadata = await metadataBefore(this.options.token, deadline, control.signal, method);
    if (tenant !== undefined) metadata.set(TENANT_METADATA_KEY, tenant);
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
}

function defaultIdOf(message: unknown): string | undefined {
  const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}
