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
import { ADMISSION, OPEN_SUBSCRIPTIONS, ROOT_LOGGER, WATCH_CONVERSATION } from '../tokens';
import { admission, AdmissionRefused } from '../admission/admission-limiter';
import type { ReadAdmission } from '../admission/read-admission';
import { refusalDetails } from '../grpc/admission-interceptor';
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
 * The messages, with the admission slot of the snapshot released once its
 * last part is written (or the stream ends first): the changes that follow
 * are pushed as they are recorded, not read on demand.
 */
async function* releasingAfterSnapshot(messages: AsyncIterable<WatchMessage>, release: () => void): AsyncGenerator<WatchMessage> {
  try {
    for await (const message of messages) {
      yield message;
      if (message.kind !== 'snapshot' || message.complete) release();
    }
  } finally {
    release();
  }
}

/**
 * WatchConversation, a server stream: the snapshot, then changes as they
 * are committed, written as the transport takes them. It counts against
 * the tenant's open streams (MAX_SUBSCRIPTIONS_PER_TENANT, shared with
 * SubscribeToolEvents); its snapshot is a read admitted like the audit
 * reads (refused with RESOURCE_EXHAUSTED and a pushback past capacity). On
 * shutdown it ends with UNAVAILABLE (the caller watches again elsewhere),
 * on erasure with NOT_FOUND.
 */
@Controller()
export class WatchConversationGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(WATCH_CONVERSATION) private readonly watchConversation: WatchConversation,
    @Inject(OPEN_SUBSCRIPTIONS) private readonly streams: OpenSubscriptions,
    @Inject(ADMISSION) private readonly admission: ReadAdmission,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'WatchConversation')
  watch(request: WatchConversationRequest, _metadata: Metadata, call: ServerWritableStream<unknown, unknown>) {
    const ids = { tenantId: request.tenant_id ?? '', conversationId: request.conversation_id ?? '' };
    return new Observable<never>((subscriber) => {
      const abort = new AbortController();
      let releaseStream = () => undefined as void;
      let endSnapshot = () => undefined as void;
      const release = () => {
        endSnapshot();
        releaseStream();
      };
      let shuttingDown = false;
      const stream = async () => {
        const readAfter = readAfterOf(request.consistency_token, budgetOf(call, WATCH_TOKEN_WAIT_MS).ms);
        const messages = this.watchConversation.execute({ ...ids, readAfter }, abort.signal);
        releaseStream = this.streams.admit({
          tenantId: ids.tenantId,
          endForShutdown: () => {
            shuttingDown = true;
            abort.abort();
          },
        });
        endSnapshot = await this.admitSnapshot(ids.tenantId, abort.signal);
        await writeWithBackpressure(call, releasingAfterSnapshot(messages, endSnapshot), toConversationChangeMessage, abort.signal);
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

  /** A slot of the audit lane for the snapshot's read; an idempotent release. */
  private async admitSnapshot(tenantId: string, signal: AbortSignal): Promise<() => void> {
    try {
      const release = await admission(this.admission.lanes.audit, tenantId, signal);
      let released = false;
      return () => {
        if (!released) release();
        released = true;
      };
    } catch (error) {
      if (!(error instanceof AdmissionRefused)) throw error;
      throw new AppError(ErrorCode.ResourceExhausted, refusalDetails('audit', error.refusal), {
        details: { retryAfterMs: error.refusal.retryAfterMs },
      });
    }
  }
}
