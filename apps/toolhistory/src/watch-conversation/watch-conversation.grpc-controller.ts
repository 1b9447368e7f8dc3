import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerWritableStream } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { WatchedInvocation } from '@toolhistory/domain';
import type { WatchConversationRequest } from '@toolhistory/grpc-api';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { budgetOf, failed } from '../grpc/grpc-call';
import { toRpcException } from '../grpc/grpc-status';
import { isoToTimestamp, RUN_STATUS, toInvocationMessage } from '../grpc/proto-mapping';
import { writeWithBackpressure } from '../grpc/write-stream';
import { OPEN_SUBSCRIPTIONS, ROOT_LOGGER, WATCH_CONVERSATION } from '../tokens';
import type { OpenSubscriptions } from '../subscription/open-subscriptions';
import type { WatchConversation, WatchMessage } from './watch-conversation';
import { readAfterOf } from '../consistency/await-recorded';

/** How long a watch's first read may wait for the caller's consistency token when the caller sets no deadline (a stream has none). */
const WATCH_TOKEN_WAIT_MS = 10_000;

const toWatchedInvocationMessage = (watched: WatchedInvocation) => ({
  invocation: toInvocationMessage(watched.invocation),
  run_status: watched.runStatus ? RUN_STATUS[watched.runStatus] : 'RUN_STATUS_UNSPECIFIED',
});

export function toConversationChangeMessage(message: WatchMessage) {
  switch (message.kind) {
    case 'snapshot':
      return { snapshot: { invocations: message.invocations.map(toWatchedInvocationMessage), complete: message.complete } };
    case 'invocation_changed':
      return {
        invocation_changed: {
          position: message.position,
          event_type: message.eventType,
          invocation: toWatchedInvocationMessage(message.invocation),
        },
      };
    case 'run_ended':
      return {
        run_ended: {
          position: message.position,
          run_id: message.runId,
          status: RUN_STATUS[message.status],
          ended_at: isoToTimestamp(message.endedAt),
        },
      };
  }
}

/**
 * WatchConversation, a server stream: the snapshot, then changes as they
 * are committed, written as the transport takes them. It counts against
 * the tenant's open streams (MAX_SUBSCRIPTIONS_PER_TENANT, shared with
 * SubscribeToolEvents); on shutdown it ends with UNAVAILABLE (the caller
 * watches again elsewhere), on erasure with NOT_FOUND.
 */
@Controller()
export class WatchConversationGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(WATCH_CONVERSATION) private readonly watchConversation: WatchConversation,
    @Inject(OPEN_SUBSCRIPTIONS) private readonly streams: OpenSubscriptions,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'WatchConversation')
  watch(request: WatchConversationRequest, _metadata: Metadata, call: ServerWritableStream<unknown, unknown>) {
    const ids = { tenantId: request.tenant_id ?? '', conversationId: request.conversation_id ?? '' };
    return new Observable<never>((subscriber) => {
      const abort = new AbortController();
      let release = () => undefined as void;
      let shuttingDown = false;
      const stream = async () => {
        const readAfter = readAfterOf(request.consistency_token, budgetOf(call, WATCH_TOKEN_WAIT_MS));
        const messages = this.watchConversation.execute({ ...ids, readAfter }, abort.signal);
        release = this.streams.admit({
          tenantId: ids.tenantId,
          endForShutdown: () => {
            shuttingDown = true;
            abort.abort();
          },
        });
        await writeWithBackpressure(call, messages, toConversationChangeMessage, abort.signal);
      };
      stream()
        .then(
          () => {
            if (!shuttingDown) return subscriber.complete();
            this.log.info(ids, 'watch ended by shutdown');
            subscriber.error(toRpcException(new AppError(ErrorCode.ShuttingDown, 'server shutting down: watch again')));
          },
          (error: unknown) => subscriber.error(failed(this.log, 'WatchConversation', ids, error)),
        )
        .finally(() => release());
      return () => {
        abort.abort();
        release();
      };
    });
  }
}
