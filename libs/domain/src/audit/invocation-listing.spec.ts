import { decodePageToken, DEFAULT_PAGE_SIZE, encodePageToken, MAX_PAGE_SIZE, pageSizeOf, statusOf } from './invocation-listing';

describe('invocation listing rules', () => {
  const filter = { tenantId: 'acme', toolName: 'git_status' };
  const cursor = {
    at: '2026-11-20T10:00:00.123456Z',
    conversationId: 'c-1',
    runId: 'r-1',
    roundIndex: 1,
    sequenceIndex: 2,
    pairKey: 'id:call_1',
  };

  it('pages 100 by default and at most 1,000', () => {
    expect(pageSizeOf(undefined)).toEqual({ ok: true, value: DEFAULT_PAGE_SIZE });
    expect(pageSizeOf(0)).toEqual({ ok: true, value: 100 });
    expect(pageSizeOf(250)).toEqual({ ok: true, value: 250 });
    expect(pageSizeOf(5_000)).toEqual({ ok: true, value: MAX_PAGE_SIZE });
    expect(pageSizeOf(-1)).toEqual({ ok: false, error: 'page_size must be a whole number, 0 or more' });
  });

  it('round-trips a page token for the same filters and refuses it for others or when forged', () => {
    const token = encodePageToken(filter, cursor);
    expect(decodePageToken(filter, token)).toEqual({ ok: true, value: cursor });
    expect(decodePageToken({ ...filter, toolName: 'run_sql' }, token)).toEqual({
      ok: false,
      error: 'page_token belongs to a listing with other filters',
    });
    expect(decodePageToken(filter, 'bm90IGEgdG9rZW4')).toEqual({ ok: false, error: 'page_token is not a token this service issued' });
    expect(decodePageToken(filter, '')).toEqual({ ok: true, value: null });
  });

  it('calls an invocation pending until its result is recorded', () => {
    expect(statusOf({ completedAt: null, isError: null })).toBe('pending');
    expect(statusOf({ completedAt: '2026-11-20T10:00:00Z', isError: false })).toBe('succeeded');
    expect(statusOf({ completedAt: '2026-11-20T10:00:00Z', isError: true })).toBe('error');
  });
});
