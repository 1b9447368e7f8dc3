import { type AuditReader, type SearchHit, searchQueryOf, type SearchRequest, wholeRedactionMarkers } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** SearchToolHistory: full-text search over the tenant's (redacted) invocations, best first. */
export class SearchToolHistory {
  constructor(private readonly reader: AuditReader) {}

  async execute(request: SearchRequest, signal?: AbortSignal): Promise<SearchHit[]> {
    const query = searchQueryOf(request);
    if (!query.ok) throw new AppError(ErrorCode.InvalidArgument, query.error);
    const hits = await this.reader.searchInvocations(query.value, signal);
    return hits.map((hit) => ({ ...hit, snippet: wholeRedactionMarkers(hit.snippet, hit.invocation) }));
  }
}
