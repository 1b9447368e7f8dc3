import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { ServerUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { ReplayHistory } from '@toolhistory/domain';
import { GetReplayHistory } from '../replay/get-replay-history';
import { EraseConversation } from '../erasure/erase-conversation';
import { QueryAudit } from '../audit/query-audit';
import { SubscribeToolEvents } from '../subscription/subscribe-tool-events';
import { writeWithBackpressure } from './write-stream';
import { ERASE_CONVERSATION, GET_REPLAY_HISTORY, QUERY_AUDIT, ROOT_LOGGER, SUBSCRIBE_TOOL_EVENTS } from '../tokens';
import { toRpcException } from './grpc-status';
import {
  formatOf,
  invocationStatusOf,
  staleResultsOf,
  timestampToMillis,
  toRecordedEventMessage,
  TimestampMessage,
  toInvocationMessage,
  toResponse,
  toSearchResponse,
  toUsageResponse,
  usageBucketOf,
} from './proto-mapping';

interface GetReplayHistoryRequest {
  tenant_id?: string;
  conversation_id?: string;
  channel?: string;
  as_of?: TimestampMessage | null;
  format?: string;
  freshness_window_seconds?: string | number;
  stale_results?: string;
}

interface ListToolInvocationsRequest {
  tenant_id?: string;
  conversation_id?: string;
  run_id?: string;
  tool_name?: string;
  status?: string;
  from?: TimestampMessage | null;
  to?: TimestampMessage | null;
  page_size?: number;
  page_token?: string;
}

interface SearchToolHistoryRequest {
  tenant_id?: string;
  query?: string;
  conversation_id?: string;
  limit?: number;
  from?: TimestampMessage | null;
  to?: TimestampMessage | null;
}

/** A turn must never hang: without a deadline from the caller, this budget applies. */
export const DEFAULT_REPLAY_BUDGET_MS = 2_000;

/** gRPC edge of toolhistory.v1.ToolHistory: translates and delegates. */
@Controller()
export class ToolHistoryController {
  private readonly log: Logger;

  constructor(
    @Inject(GET_REPLAY_HISTORY) private readonly getReplayHistory: GetReplayHistory,
    @Inject(ERASE_CONVERSATION) private readonly eraseConversation: EraseConversation,
    @Inject(QUERY_AUDIT) private readonly queryAudit: QueryAudit,
    @Inject(SUBSCRIBE_TOOL_EVENTS) private readonly subscribeToolEvents: SubscribeToolEvents,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  // A cached history is the same object on every hit, so its mapped response is reused too.
  private readonly responses = new WeakMap<ReplayHistory, ReturnType<typeof toResponse>>();

  private response(history: ReplayHistory) {
    let response = this.responses.get(history);
    if (!response) {
      response = toResponse(history);
      this.responses.set(history, response);
    }
    return response;
  }

  /** Every RPC fails the same way: logged with its ids, answered with the classified status. */
  private async answer<T>(rpc: string, ids: Record<string, unknown>, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.log.warn({ err: error, ...ids }, `${rpc} failed`);
      throw toRpcException(error);
    }
  }

  @GrpcMethod('ToolHistory', 'GetReplayHistory')
  replay(request: GetReplayHistoryRequest, _metadata: unknown, call: ServerUnaryCall<unknown, unknown>) {
    return this.answer('GetReplayHistory', { tenantId: request.tenant_id, conversationId: request.conversation_id }, async () => {
      const history = await this.getReplayHistory.execute({
        tenantId: request.tenant_id ?? '',
        conversationId: request.conversation_id ?? '',
        channel: request.channel || undefined,
        asOf: timestampToMillis(request.as_of),
        format: formatOf(request.format),
        freshnessWindowSeconds: request.freshness_window_seconds === undefined ? undefined : Number(request.freshness_window_seconds),
        staleResults: staleResultsOf(request.stale_results),
        budgetMs: budgetOf(call),
      });
      return this.response(history);
    });
  }

  @GrpcMethod('ToolHistory', 'EraseConversation')
  erase(request: { tenant_id?: string; conversation_id?: string }) {
    const command = { tenantId: request.tenant_id ?? '', conversationId: request.conversation_id ?? '' };
    return this.answer('EraseConversation', command, async () => {
      const outcome = await this.eraseConversation.execute(command);
      // Ids and counts only: an audit can show the request was honoured.
      this.log.info({ ...command, ...outcome }, 'conversation erased');
      return { erased_events: outcome.erasedEvents, erased_invocations: outcome.erasedInvocations };
    });
  }

  @GrpcMethod('ToolHistory', 'ListToolInvocations')
  listInvocations(request: ListToolInvocationsRequest) {
    return this.answer('ListToolInvocations', { tenantId: request.tenant_id }, async () => {
      const page = await this.queryAudit.listInvocations({
        tenantId: request.tenant_id ?? '',
        conversationId: request.conversation_id,
        runId: request.run_id,
        toolName: request.tool_name,
        status: invocationStatusOf(request.status),
        from: timestampToMillis(request.from),
        to: timestampToMillis(request.to),
        pageSize: request.page_size,
        pageToken: request.page_token,
      });
      return { invocations: page.invocations.map(toInvocationMessage), next_page_token: page.nextPageToken };
    });
  }

  @GrpcMethod('ToolHistory', 'GetUsage')
  usage(request: { tenant_id?: string; from?: TimestampMessage | null; to?: TimestampMessage | null; bucket?: string }) {
    return this.answer('GetUsage', { tenantId: request.tenant_id }, async () =>
      toUsageResponse(
        await this.queryAudit.usage({
          tenantId: request.tenant_id ?? '',
          from: timestampToMillis(request.from),
          to: timestampToMillis(request.to),
          bucket: usageBucketOf(request.bucket),
        }),
      ),
    );
  }

  // The query stays out of the log: people search for the very values they worry about.
  @GrpcMethod('ToolHistory', 'SearchToolHistory')
  search(request: SearchToolHistoryRequest) {
    return this.answer('SearchToolHistory', { tenantId: request.tenant_id }, async () =>
      toSearchResponse(
        await this.queryAudit.search({
          tenantId: request.tenant_id ?? '',
          query: request.query ?? '',
          conversationId: request.conversation_id,
          limit: request.limit,
          from: timestampToMillis(request.from),
          to: timestampToMillis(request.to),
        }),
      ),
    );
  }

  /**
   * A server stream: events are written as the store yields them, pausing
   * while the transport is full; the caller's cancel (or disconnect) aborts
   * the subscription, which ends the store's reads.
   */
  @GrpcMethod('ToolHistory', 'SubscribeToolEvents')
  subscribe(
    request: { tenant_id?: string; from_position?: string | number; types?: string[] },
    _metadata: unknown,
    call: ServerWritableStream<unknown, unknown>,
  ) {
    const ids = { tenantId: request.tenant_id, fromPosition: String(request.from_position ?? '0') };
    return new Observable<never>((subscriber) => {
      const abort = new AbortController();
      this.answer('SubscribeToolEvents', ids, async () => {
        const events = this.subscribeToolEvents.open(
          { tenantId: request.tenant_id ?? '', fromPosition: ids.fromPosition, types: request.types ?? [] },
          abort.signal,
        );
        await writeWithBackpressure(call, events, toRecordedEventMessage, abort.signal);
      }).then(
        () => subscriber.complete(),
        (error: unknown) => subscriber.error(error),
      );
      return () => abort.abort();
    });
  }
}

function budgetOf(call: ServerUnaryCall<unknown, unknown> | undefined): number {
  const deadline = call?.getDeadline?.();
  const at = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' ? deadline : Number.POSITIVE_INFINITY;
  if (!Number.isFinite(at)) return DEFAULT_REPLAY_BUDGET_MS;
  // Leave a little time to send the UNAVAILABLE answer before the deadline passes.
  return Math.max(0, at - Date.now() - 5);
}
