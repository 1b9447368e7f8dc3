import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { ConversationWatchEvent } from '@toolhistory/console-api';
import type { WatchedInvocation } from '@toolhistory/domain';
import { ErrorCode, toAppError } from '@toolhistory/errors';
import { toInvocationView } from '../console/console-views';
import { answerHttp } from '../http/answer-http';
import type { OpenSubscriptions } from '../subscription/open-subscriptions';
import { OPEN_SUBSCRIPTIONS, ROOT_LOGGER, WATCH_CONVERSATION } from '../tokens';
import type { WatchConversation, WatchMessage } from './watch-conversation';

/** A comment line every so often, so proxies that close idle connections keep the stream open. */
export const KEEP_ALIVE_MS = 15_000;
/** The first read's budget: past it the request fails like any other route's. */
const FIRST_READ_MS = 10_000;

const toWatchedView = (watched: WatchedInvocation) => ({
  invocation: toInvocationView(watched.invocation),
  runStatus: watched.runStatus ?? ('unknown' as const),
});

export function toWatchEvent(message: WatchMessage): ConversationWatchEvent {
  switch (message.kind) {
    case 'snapshot':
      return { event: 'snapshot', data: { invocations: message.invocations.map(toWatchedView), complete: message.complete } };
    case 'invocation_changed':
      return {
        event: 'change',
        data: {
          kind: message.kind,
          position: message.position,
          eventType: message.eventType,
          invocation: toWatchedView(message.invocation),
        },
      };
    case 'run_ended':
      return { event: 'change', data: message };
  }
}

const serverSentEvent = ({ event, data }: ConversationWatchEvent) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * WatchConversation for the console, as server-sent events (the browser's
 * fetch reads them with its bearer header; EventSource cannot send one).
 * A refusal or a failed first read answers a JSON error like any route;
 * once streaming, an erasure or a shutdown is said in an `ended` event.
 */
@Controller('api/v1/tenants/:tenant/conversations/:conversation')
export class WatchConversationHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(WATCH_CONVERSATION) private readonly watchConversation: WatchConversation,
    @Inject(OPEN_SUBSCRIPTIONS) private readonly streams: OpenSubscriptions,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'console' });
  }

  @Get('watch')
  async watch(@Param('tenant') tenantId: string, @Param('conversation') conversationId: string, @Res() response: Response): Promise<void> {
    const ids = { tenantId, conversationId };
    const abort = new AbortController();
    let shuttingDown = false;
    const messages = await answerHttp(this.log, 'watch', ids, FIRST_READ_MS, async () => {
      const iterator = this.watchConversation.execute(ids, abort.signal)[Symbol.asyncIterator]();
      const release = this.streams.admit({
        tenantId,
        endForShutdown: () => {
          shuttingDown = true;
          abort.abort();
        },
      });
      try {
        return { iterator, first: await iterator.next(), release };
      } catch (error) {
        release();
        throw error;
      }
    });
    response.on('close', () => abort.abort());
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    response.flushHeaders();
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    try {
      let next = messages.first;
      while (!next.done && !abort.signal.aborted) {
        response.write(serverSentEvent(toWatchEvent(next.value)));
        next = await messages.iterator.next();
      }
      if (shuttingDown)
        response.write(serverSentEvent({ event: 'ended', data: { reason: 'shutdown', message: 'server shutting down: watch again' } }));
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.code === ErrorCode.NotFound) {
        response.write(serverSentEvent({ event: 'ended', data: { reason: 'erased', message: error.message } }));
      } else {
        this.log.warn({ err: thrown, ...ids }, 'watch failed');
      }
    } finally {
      clearInterval(keepAlive);
      messages.release();
      await messages.iterator.return?.();
      response.end();
    }
  }
}
