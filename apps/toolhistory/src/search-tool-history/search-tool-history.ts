import {
  type AuditReader,
  type ConsistencyNeed,
  type SearchHit,
  type SearchMatch,
  searchQueryOf,
  type SearchRequest,
  wholeRedactionMarkers,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { type AwaitRecorded, awaitRecordedWith, type ReadAfter, READ_MODEL } from '../consistency/await-recorded';

/** What a search waits for with a consistency token: its own projection, which indexes after the recording commit. */
export interface SearchConsistency {
  awaitRecorded: AwaitRecorded;
  needs: Readonly<Record<SearchMatch, ConsistencyNeed>>;
}

/** SearchToolHistory: validate, wait for the caller's own events to be indexed (its token), search, mark whole redactions. */
export class SearchToolHistory {
  constructor(
    private readonly reader: AuditReader,
    private readonly consistency?: SearchConsistency,
  ) {}

  async execute(request: SearchRequest & { readAfter?: ReadAfter }, signal?: AbortSignal): Promise<SearchHit[]> {
    const query = searchQueryOf(request);
    if (!query.ok) throw new AppError(ErrorCode.InvalidArgument, query.error);
    const need = this.consistency?.needs[query.value.match] ?? READ_MODEL;
    await awaitRecordedWith(this.consistency?.awaitRecorded, request.readAfter, need, signal);
    const hits = await this.reader.searchInvocations(query.value, signal);
    return hits.map((hit) => ({ ...hit, snippet: wholeRedactionMarkers(hit.snippet, hit.invocation) }));
  }
}
