import {
  withPayloadsExpiredBy,
  type ConversationRows,
  replayHistory,
  type ReplayHistory,
  type ReplayPolicy,
  type ReplayReader,
  type ReplayRequest,
  type TokenCounter,
  translatorOf,
} from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, idProblem, requireArguments } from '@toolhistory/errors';
import { awaitRecordedWith, READ_MODEL } from '../consistency/await-recorded';
import type { ReplayHistoryMemo } from './caching-replay-reader';
import type { AwaitRecorded, ReadAfter } from '../consistency/await-recorded';

/** The request as the edge gives it: the domain's, with the channel and the moment optional (the conversation's, now). */
export type GetReplayHistoryQuery = Omit<ReplayRequest, 'channel' | 'asOf'> & {
  channel?: string;
  /** Milliseconds since the epoch; undefined = now. */
  asOf?: number;
  /** Answer only once everything through this consistency token is recorded. */
  readAfter?: ReadAfter;
};

export interface GetReplayHistoryOptions {
  /** Counts what rows recorded before token counts were stored, and placeholder notices, take. */
  tokens: TokenCounter;
  /** Histories computed before, kept with their rows (the caching reader); none: every request is computed. */
  memo?: ReplayHistoryMemo;
  /** Waits for a query's consistency token; none: tokens are refused (a reader with no recording to wait for). */
  awaitRecorded?: AwaitRecorded;
  now?: () => number;
}

/** An unknown conversation's answer; typed, so a new field of the history cannot be missing here. */
const EMPTY: Readonly<ReplayHistory> = Object.freeze({ turns: [], omitted: [], pendingApprovals: [], historyTokens: 0 });

const NO_MEMO: ReplayHistoryMemo = { recall: () => undefined, keep: (_rows, _request, history) => history };

/**
 * The turn-start query: validate, wait for the caller's own events (its
 * consistency token), read the conversation, apply the replay rules
 * (`replayHistory`), answer. The reader may be the caching one, whose
 * memo then gives back a history computed before; the caller's deadline is
 * the edge's, which aborts `signal` (and with it the database statement).
 */
export class GetReplayHistory {
  private readonly memo: ReplayHistoryMemo;
  private readonly now: () => number;

  constructor(
    private readonly reader: ReplayReader,
    private readonly policy: ReplayPolicy,
    private readonly options: GetReplayHistoryOptions,
  ) {
    this.memo = options.memo ?? NO_MEMO;
    this.now = options.now ?? Date.now;
  }

  async execute(query: GetReplayHistoryQuery, signal?: AbortSignal): Promise<ReplayHistory> {
    validate(query);
    // Without a token nothing is awaited: the read starts at once, as the cache's change tracking expects.
    const freshness = query.readAfter
      ? await awaitRecordedWith(this.options.awaitRecorded, query.readAfter, READ_MODEL, signal)
      : undefined;
    const now = this.now();
    const asOf = query.asOf ?? now;
    const read = await this.reader.readConversation(query.tenantId, query.conversationId, signal, freshness);
    if (read === null) return EMPTY;
    // Payloads whose retention ended since the rows were read (cached) are gone, whatever moment is asked about.
    const invocations = withPayloadsExpiredBy(read.invocations, now);
    const rows = invocations === read.invocations ? read : { ...read, invocations: [...invocations] };
    const request = replayRequestOf(query, rows, asOf);
    const remembered = this.memo.recall(rows, request);
    if (remembered) return remembered;
    // The caller went away while the rows were read: nobody waits for the history, so it is not computed.
    if (signal?.aborted) throw new AppError(ErrorCode.DeadlineExceeded, 'the caller went away before the history was computed');
    return this.memo.keep(
      rows,
      request,
      replayHistory(request, rows.runs, rows.invocations, this.policy, this.options.tokens, rows.responses),
    );
  }
}

function validate(query: GetReplayHistoryQuery): void {
  requireArguments({ tenant_id: query.tenantId, conversation_id: query.conversationId });
  checkRequestIds({ tenant_id: query.tenantId, conversation_id: query.conversationId, channel: query.channel });
  if (query.freshnessWindowSeconds !== undefined && (!Number.isFinite(query.freshnessWindowSeconds) || query.freshnessWindowSeconds < 0)) {
    throw new AppError(ErrorCode.InvalidArgument, 'freshness_window_seconds must not be negative');
  }
  if (query.maxHistoryTokens !== undefined && !(Number.isInteger(query.maxHistoryTokens) && query.maxHistoryTokens >= 0)) {
    throw new AppError(ErrorCode.InvalidArgument, 'max_history_tokens must not be negative');
  }
  checkBranch(query.branchMessageIds ?? []);
  checkRequestIds({ model: query.model, provider: query.provider });
  const formatProvider = translatorOf(query.format).provider;
  if (query.provider && formatProvider !== null && query.provider !== formatProvider) {
    throw new AppError(
      ErrorCode.InvalidArgument,
      `provider ${JSON.stringify(query.provider)} is not the provider of the requested format (${formatProvider}): leave it out`,
    );
  }
}

/** The most message ids a branch may name; a host's conversation is far shorter, and each id is looked up in a set. */
export const MAX_BRANCH_MESSAGE_IDS = 100_000;

function checkBranch(ids: readonly string[]): void {
  if (ids.length > MAX_BRANCH_MESSAGE_IDS)
    throw new AppError(ErrorCode.InvalidArgument, `branch_message_ids may name at most ${MAX_BRANCH_MESSAGE_IDS} messages`);
  const empty = ids.findIndex((id) => id === '');
  if (empty >= 0) throw new AppError(ErrorCode.InvalidArgument, `branch_message_ids[${empty}] is empty`);
  const problem = ids.findIndex((id) => idProblem('id', id) !== null);
  if (problem >= 0) checkRequestIds({ [`branch_message_ids[${problem}]`]: ids[problem] });
}

/** The domain's request: the query's settings, the channel the conversation was recorded with unless the query names one. */
function replayRequestOf(query: GetReplayHistoryQuery, rows: ConversationRows, asOf: number): ReplayRequest {
  return {
    tenantId: query.tenantId,
    conversationId: query.conversationId,
    channel: query.channel || rows.channel,
    asOf,
    format: query.format,
    freshnessWindowSeconds: query.freshnessWindowSeconds,
    staleResults: query.staleResults,
    maxHistoryTokens: query.maxHistoryTokens,
    ...(query.branchMessageIds?.length ? { branchMessageIds: query.branchMessageIds } : {}),
    ...(query.model ? { model: query.model } : {}),
    ...(query.provider ? { provider: query.provider } : {}),
  };
}
