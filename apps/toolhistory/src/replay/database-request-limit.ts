import type { ConversationRows, ReadConversationOptions, ReplayReader } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

export const DEFAULT_MAX_DATABASE_REQUESTS = 256;
/** The pushback of a refusal here: requests on the database take milliseconds, so a slot frees soon. */
export const DATABASE_BUSY_RETRY_AFTER_MS = 100;

/**
 * A bound on replay's requests waiting on the database at once (version
 * checks and reads): one more is refused with RESOURCE_EXHAUSTED at once
 * rather than queued behind them, so a slow database sheds load instead of
 * growing a queue of turns that will miss their deadlines anyway. What the
 * cache answers never gets here.
 */
export class LimitedReplayReader implements ReplayReader {
  private inFlight = 0;
  /** Requests refused since start. */
  refused = 0;

  constructor(
    private readonly reader: ReplayReader,
    private readonly maxInFlight: number = DEFAULT_MAX_DATABASE_REQUESTS,
  ) {}

  readConversation(
    tenantId: string,
    conversationId: string,
    signal?: AbortSignal,
    options?: ReadConversationOptions,
  ): Promise<ConversationRows | null> {
    return this.admitted(() => this.reader.readConversation(tenantId, conversationId, signal, options));
  }

  conversationVersion(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<string | null> {
    return this.admitted(() => this.reader.conversationVersion(tenantId, conversationId, signal));
  }

  private async admitted<T>(request: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.maxInFlight) {
      this.refused += 1;
      throw new AppError(
        ErrorCode.ResourceExhausted,
        `replay has ${this.maxInFlight} database requests in flight, its limit; retry after a backoff`,
        { details: { retryAfterMs: DATABASE_BUSY_RETRY_AFTER_MS } },
      );
    }
    this.inFlight += 1;
    try {
      return await request();
    } finally {
      this.inFlight -= 1;
    }
  }
}
