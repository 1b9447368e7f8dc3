import { type AuditReader, conversationTimeline, type InvocationRecord } from '@toolhistory/domain';
import type { ConversationTimelineView } from '@toolhistory/console-api';
import { checkRequestIds, requireArguments } from '@toolhistory/errors';
import { toTimelineRunViews } from '../console/console-views';
import type { ListToolInvocations } from '../list-tool-invocations/list-tool-invocations';
import type { GetReplayHistory } from '../replay/get-replay-history';

/** A timeline shows at most this many invocations; a longer conversation says it is truncated. */
export const TIMELINE_MAX_INVOCATIONS = 5_000;
const PAGE_SIZE = 1_000;

export interface TimelineQuery {
  tenantId: string;
  conversationId: string;
  /** Milliseconds since the epoch; undefined = now. */
  asOf?: number;
}

/**
 * The console's conversation timeline: the invocations as stored (audit
 * listing), next to what replay makes of them at `asOf` (the same replay
 * agents get, so the console never explains a rule of its own).
 */
export class GetConversationTimeline {
  constructor(
    private readonly invocations: ListToolInvocations,
    private readonly reader: AuditReader,
    private readonly replay: GetReplayHistory,
    private readonly now: () => number = Date.now,
  ) {}

  async execute(query: TimelineQuery, signal?: AbortSignal): Promise<ConversationTimelineView> {
    requireArguments({ tenant_id: query.tenantId, conversation_id: query.conversationId });
    checkRequestIds({ tenant_id: query.tenantId, conversation_id: query.conversationId });
    const asOf = query.asOf ?? this.now();
    const { invocations, truncated } = await this.storedInvocations(query, signal);
    const runs = await this.reader.conversationRuns(query.tenantId, query.conversationId, signal);
    const history = await this.replay.execute(
      { tenantId: query.tenantId, conversationId: query.conversationId, format: 'openai_chat', asOf },
      signal,
    );
    const timeline = conversationTimeline(invocations, history, runs);
    const times = invocations.map((i) => i.at).sort();
    return {
      tenantId: query.tenantId,
      conversationId: query.conversationId,
      asOf: new Date(asOf).toISOString(),
      firstAt: times[0] ?? null,
      lastAt: times[times.length - 1] ?? null,
      runs: toTimelineRunViews(timeline),
      kept: timeline.kept,
      omitted: timeline.omitted,
      notYetRecorded: timeline.notYetRecorded,
      historyTokens: history.historyTokens,
      truncated,
    };
  }

  private async storedInvocations(
    query: TimelineQuery,
    signal?: AbortSignal,
  ): Promise<{ invocations: InvocationRecord[]; truncated: boolean }> {
    const invocations: InvocationRecord[] = [];
    let pageToken = '';
    do {
      const page = await this.invocations.execute(
        { tenantId: query.tenantId, conversationId: query.conversationId, pageSize: PAGE_SIZE, pageToken },
        signal,
      );
      invocations.push(...page.invocations);
      pageToken = page.nextPageToken;
    } while (pageToken !== '' && invocations.length < TIMELINE_MAX_INVOCATIONS);
    return {
      invocations: invocations.slice(0, TIMELINE_MAX_INVOCATIONS),
      truncated: pageToken !== '' || invocations.length > TIMELINE_MAX_INVOCATIONS,
    };
  }
}
