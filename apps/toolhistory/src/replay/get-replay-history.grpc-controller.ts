import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { GetReplayHistoryRequest } from '@toolhistory/grpc-api';
import type { ReplayHistory } from '@toolhistory/domain';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import { MemoizedResponse } from '../grpc/memoized-response';
import { formatOf, ReplayView, staleResultsOf, timestampToMillis, toResponse, viewOf } from '../grpc/proto-mapping';
import { GET_REPLAY_HISTORY, ROOT_LOGGER } from '../tokens';
import { GetReplayHistory } from './get-replay-history';
import { readAfterOf } from '../consistency/await-recorded';

/** A turn must never hang: without a deadline from the caller, this budget applies. */
export const DEFAULT_REPLAY_BUDGET_MS = 2_000;

/** GetReplayHistory: the turn-start query. */
@Controller()
export class GetReplayHistoryGrpcController {
  private readonly log: Logger;
  // A cached history is the same object on every hit, so its response (per view) is mapped and encoded once.
  private readonly responses = new WeakMap<ReplayHistory, Partial<Record<ReplayView, MemoizedResponse>>>();

  constructor(
    @Inject(GET_REPLAY_HISTORY) private readonly getReplayHistory: GetReplayHistory,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'GetReplayHistory')
  replay(request: GetReplayHistoryRequest, _metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    const ids = { tenantId: request.tenant_id, conversationId: request.conversation_id };
    const budget = budgetOf(call, DEFAULT_REPLAY_BUDGET_MS);
    // Past the deadline the answer is DEADLINE_EXCEEDED and the signal cancels the database statement.
    return answerUnary(this.log, 'GetReplayHistory', ids, budget, async (signal) => {
      const view = viewOf(request.view);
      const history = await this.getReplayHistory.execute(
        {
          tenantId: request.tenant_id ?? '',
          conversationId: request.conversation_id ?? '',
          channel: request.channel || undefined,
          asOf: timestampToMillis(request.as_of, 'as_of'),
          format: formatOf(request.format),
          freshnessWindowSeconds: request.freshness_window_seconds === undefined ? undefined : Number(request.freshness_window_seconds),
          staleResults: staleResultsOf(request.stale_results),
          maxHistoryTokens: request.max_history_tokens ?? undefined,
          branchMessageIds: request.branch_message_ids ?? [],
          model: request.model || undefined,
          provider: request.provider || undefined,
          readAfter: readAfterOf(request.consistency_token, budget.ms),
        },
        signal,
      );
      return this.response(history, view);
    });
  }

  private response(history: ReplayHistory, view: ReplayView) {
    let byView = this.responses.get(history);
    if (!byView) {
      byView = {};
      this.responses.set(history, byView);
    }
    return (byView[view] ??= new MemoizedResponse(toResponse(history, view)));
  }
}
