import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerWritableStream } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { SubscribeToolEventsRequest } from '@toolhistory/grpc-api';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { failed } from '../grpc/grpc-call';
import { toRpcException } from '../grpc/grpc-status';
import { toRecordedEventMessage } from '../grpc/proto-mapping';
import { writeWithBackpressure } from '../grpc/write-stream';
import { OPEN_SUBSCRIPTIONS, ROOT_LOGGER, SUBSCRIBE_TOOL_EVENTS } from '../tokens';
import { OpenSubscriptions } from './open-subscriptions';
import { SubscribeToolEvents } from './subscribe-tool-events';

/**
 * SubscribeToolEvents, a server stream: events are written as the store
 * yields them, pausing while the transport is full; the caller's cancel (or
 * disconnect) aborts the subscription, which ends the store's reads. On
 * shutdown the stream ends with UNAVAILABLE after the events already sent,
 * so the consumer resumes from its last position on another instance.
 */
@Controller()
export class SubscribeToolEventsGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(SUBSCRIBE_TOOL_EVENTS) private readonly subscribeToolEvents: SubscribeToolEvents,
    @Inject(OPEN_SUBSCRIPTIONS) private readonly subscriptions: OpenSubscriptions,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'SubscribeToolEvents')
  subscribe(request: SubscribeToolEventsRequest, _metadata: Metadata, call: ServerWritableStream<unknown, unknown>) {
    const tenantId = request.tenant_id ?? '';
    const ids = { tenantId, fromPosition: String(request.from_position ?? '0') };
    return new Observable<never>((subscriber) => {
      const abort = new AbortController();
      let release = () => undefined as void;
      let shuttingDown = false;
      const stream = async () => {
        const events = this.subscribeToolEvents.execute(
          { tenantId, fromPosition: ids.fromPosition, types: request.types ?? [] },
          abort.signal,
        );
        release = this.subscriptions.admit({
          tenantId,
          endForShutdown: () => {
            shuttingDown = true;
            abort.abort();
          },
        });
        await writeWithBackpressure(call, events, toRecordedEventMessage, abort.signal);
      };
      stream()
        .then(
          () => {
            if (!shuttingDown) return subscriber.complete();
            this.log.info(ids, 'subscription ended by shutdown');
            subscriber.error(toRpcException(new AppError(ErrorCode.ShuttingDown, 'server shutting down: resume from your last position')));
          },
          (error: unknown) => subscriber.error(failed(this.log, 'SubscribeToolEvents', ids, error)),
        )
        .finally(() => release());
      return () => {
        abort.abort();
        release();
      };
    });
  }
}
