import { HistoryFormat, replayHistory, ReplayHistory, ReplayPolicy, ReplayReader, StaleResultMode } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

export interface GetReplayHistoryQuery {
  tenantId: string;
  conversationId: string;
  channel?: string;
  /** Milliseconds since the epoch; undefined = now. */
  asOf?: number;
  format: HistoryFormat;
  freshnessWindowSeconds?: number;
  staleResults?: StaleResultMode;
  /** Milliseconds left before the caller's deadline; the answer is UNAVAILABLE rather than late. */
  budgetMs?: number;
}

const EMPTY: ReplayHistory = { turns: [], omitted: [] };

/**
 * The turn-start query: validates, reads the conversation within the
 * caller's time budget, and applies the replay rules.
 */
export class GetReplayHistory {
  constructor(
    private readonly reader: ReplayReader,
    private readonly policy: ReplayPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  async execute(query: GetReplayHistoryQuery): Promise<ReplayHistory> {
    const missing = (['tenantId', 'conversationId'] as const).filter((f) => !query[f]);
    if (missing.length > 0) {
      const names = missing.map((f) => (f === 'tenantId' ? 'tenant_id' : 'conversation_id'));
      throw new AppError(ErrorCode.InvalidArgument, `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} required`);
    }
    if (query.freshnessWindowSeconds !== undefined && (!Number.isFinite(query.freshnessWindowSeconds) || query.freshnessWindowSeconds < 0)) {
      throw new AppError(ErrorCode.InvalidArgument, 'freshness_window_seconds must not be negative');
    }
    const asOf = query.asOf ?? this.now();
    const rows = await withinBudget(this.reader.readConversation(query.tenantId, query.conversationId), query.budgetMs);
    if (rows === null) return EMPTY;
    return replayHistory(
      {
        tenantId: query.tenantId,
        conversationId: query.conversationId,
        channel: query.channel || rows.channel,
        asOf,
        format: query.format,
        freshnessWindowSeconds: query.freshnessWindowSeconds,
        staleResults: query.staleResults,
      },
      rows.runs,
      rows.invocations,
      this.policy,
    );
  }
}

async function withinBudget<T>(work: Promise<T>, budgetMs: number | undefined): Promise<T> {
  if (budgetMs === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError(ErrorCode.StorageUnavailable, `the read model did not answer within ${Math.round(budgetMs)} ms`, { retriable: true })),
      Math.max(0, budgetMs),
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
