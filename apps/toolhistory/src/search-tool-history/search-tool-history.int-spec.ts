import type { ToolEvent } from '@toolhistory/contract';
import { parsePolicyDocument, SearchHit } from '@toolhistory/domain';
import { PostgresAuditReader, PostgresRecordingStore, SEARCH_RANKING_BOUND } from '@toolhistory/persistence';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { catchUpSearch } from '../../../../test/support/read-model-queries';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { SearchToolHistory } from './search-tool-history';

const at = (minute: number, second = 0) => `2026-11-20T10:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;
const filler = (words: number, seed: number) =>
  Array.from({ length: words }, (_, i) => ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'][(i * 7 + seed) % 6]).join(' ');

const parsed = parsePolicyDocument({ tools: { vault_read: { persist: 'none' }, audit_probe: { persist: 'metadata' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));

describe('SearchToolHistory: full-text search over invocations (real PostgreSQL)', () => {
  let db: FreshSchema;
  let audit: SearchToolHistory;
  const keyOf = (hit: SearchHit) => `${hit.invocation.conversationId}/${hit.invocation.toolName}`;
  const search = (query: string, extra: Partial<Parameters<SearchToolHistory['execute']>[0]> = {}) =>
    audit.execute({ tenantId: 'acme', query, ...extra });

  beforeAll(async () => {
    db = await freshSchema('search');
    audit = new SearchToolHistory(new PostgresAuditReader(db.pool));
    const code = { tenantId: 'acme', conversationId: 'c-code', runId: 'r1' };
    const billing = { tenantId: 'acme', conversationId: 'c-billing', runId: 'r1' };
    const mail = { tenantId: 'acme', conversationId: 'c-mail', runId: 'r1' };
    const bulk = { tenantId: 'acme', conversationId: 'c-bulk', runId: 'r1' };
    const other = { tenantId: 'other', conversationId: 'c-code', runId: 'r1' };
    const pair = (
      scope: typeof code,
      seq: number,
      minute: number,
      toolName: string,
      args: Record<string, unknown>,
      result: unknown,
    ): ToolEvent[] => [
      toolCall(scope, { roundIndex: 0, sequenceIndex: seq, toolName, arguments: args as never, occurredAt: at(minute) }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: seq, result: result as never, occurredAt: at(minute, 1) }),
    ];
    const events: ToolEvent[] = [
      ...pair(code, 0, 1, 'git_status', { cwd: '.' }, 'On branch main\nChanges not staged for commit:\n\tmodified:   src/app.ts\n'),
      ...pair(code, 1, 2, 'read_file', { path: 'src/app.ts' }, 'export const app = createApp();'),
      ...pair(code, 2, 3, 'run_shell', { command: 'npm test' }, `${filler(40, 1)} git status printed nothing`),
      // The same words in a strong and in a weak place: tool name and arguments, versus once each deep in a long result.
      ...pair(billing, 0, 10, 'create_refund', { invoice: 'INV-7', reason: 'refund the duplicate invoice' }, { status: 'created' }),
      ...pair(
        billing,
        1,
        11,
        'fetch_page',
        { url: 'https://docs.example.com/faq' },
        `${filler(300, 2)} invoice ${filler(200, 3)} refund ${filler(100, 4)}`,
      ),
      // The recorder's default detectors turn the address into a marker before anything is stored.
      ...pair(mail, 0, 20, 'send_email', { to: 'ann.lee@example.org', body: 'welcome aboard' }, 'sent to ann.lee@example.org'),
      // Policies that keep no payload: only the tool name (and ids, times) rest in the row.
      ...pair(mail, 1, 21, 'vault_read', { path: 'kv/prod', note: 'zebracodeword' }, 'value: zebrasecret'),
      ...pair(mail, 2, 22, 'audit_probe', { q: 'probeargument' }, 'proberesult'),
      // An excerpt of 30 words from 'quokka' ends inside the marker the address becomes.
      ...pair(mail, 3, 23, 'notify', { channel: 'mail' }, `quokka ${filler(24, 5)} ann.lee@example.org ${filler(20, 6)}`),
      runCompleted(code, { occurredAt: at(5) }),
      // Another tenant with exactly the words searched for above.
      ...pair(other, 0, 1, 'git_status', { cwd: '.' }, 'modified: src/app.ts refund invoice welcome'),
      ...pair(other, 1, 2, 'create_refund', { invoice: 'INV-7', reason: 'refund the duplicate invoice' }, { status: 'created' }),
    ];
    for (let i = 0; i < 120; i += 1)
      events.push(...pair(bulk, i, 30 + Math.floor(i / 10), 'bulk_probe', { n: i }, 'same words every time'));
    const store = new PostgresRecordingStore(db.pool, parsed.policy.redaction);
    await store.recordBatch({
      consumerGroup: 'g',
      topic: 't',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
    // Nothing is searchable before the search projection has followed the recording.
    expect(await search('git_status')).toEqual([]);
    await catchUpSearch(db.pool);
  });
  afterAll(() => db.drop());

  it('ranks a better match first and answers scores best first', async () => {
    const hits = await search('refund invoice');
    expect(hits.map(keyOf)).toEqual(['c-billing/create_refund', 'c-billing/fetch_page']);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    expect(hits[1].score).toBeGreaterThan(0);

    // A tool's name weighs more than the same words in another tool's output.
    const git = await search('git status');
    expect(git.map(keyOf)).toEqual(['c-code/git_status', 'c-code/run_shell']);
    expect(git[0].score).toBeGreaterThan(git[1].score);
  });

  it('never answers the invocations of another tenant, even when they match better', async () => {
    for (const query of ['git_status', 'refund invoice', 'src/app.ts', 'welcome']) {
      const hits = await search(query);
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.every((h) => h.invocation.tenantId === 'acme')).toBe(true);
    }
    const theirs = await audit.execute({ tenantId: 'other', query: 'refund invoice' });
    expect(theirs.map((h) => [h.invocation.tenantId, h.invocation.toolName])).toEqual([
      ['other', 'create_refund'],
      ['other', 'git_status'],
    ]);
    expect(await audit.execute({ tenantId: 'nobody', query: 'refund' })).toEqual([]);
  });

  it('finds identifiers and paths: a tool named git_status, src/app.ts by its whole path, its file name or its folder', async () => {
    expect((await search('git_status')).map(keyOf)[0]).toBe('c-code/git_status');
    const byPath = (await search('src/app.ts')).map(keyOf).sort();
    expect(byPath).toEqual(['c-code/git_status', 'c-code/read_file']);
    expect((await search('app.ts')).map(keyOf).sort()).toEqual(byPath);
    expect((await search('"src/app.ts"')).map(keyOf).sort()).toEqual(byPath);
    expect((await search('createApp')).map(keyOf)).toEqual(['c-code/read_file']);
  });

  it('highlights the matched words in a one-line snippet of the stored text', async () => {
    const [hit] = await search('createapp');
    expect(hit.snippet).toContain('**createApp**');
    expect(hit.snippet).not.toMatch(/\n/);
    const [status] = await search('staged');
    expect(status.snippet).toContain('not **staged** for commit');
    // The path reads as recorded, with both of its words marked.
    const [path] = await search('src/app.ts', { conversationId: 'c-code' });
    expect(path.snippet).toContain('**src**/**app.ts**');
    const [refund] = await search('"duplicate invoice"');
    expect(refund.snippet).toContain('**duplicate** **invoice**');
    expect(refund.invocation).toMatchObject({
      toolName: 'create_refund',
      arguments: { invoice: 'INV-7', reason: 'refund the duplicate invoice' },
      result: { status: 'created' },
    });
  });

  it('says where the words matched: the fields holding any word looked for, in the order tool name, arguments, result', async () => {
    const refund = await search('refund invoice');
    expect(refund.map((h) => [h.invocation.toolName, h.matchedIn])).toEqual([
      ['create_refund', ['toolName', 'arguments']],
      ['fetch_page', ['result']],
    ]);
    expect((await search('createapp'))[0].matchedIn).toEqual(['result']);
    expect((await search('src/app.ts', { conversationId: 'c-code' })).map((h) => [h.invocation.toolName, h.matchedIn])).toEqual([
      ['read_file', ['arguments']],
      ['git_status', ['result']],
    ]);
    // An excluded word is not where anything matched.
    expect((await search('status -staged')).map((h) => [h.invocation.toolName, h.matchedIn])).toEqual([
      ['create_refund', ['result']],
      ['run_shell', ['result']],
    ]);
  });

  it('filters by conversation and by the invocation time (from inclusive, to exclusive)', async () => {
    expect((await search('status', { conversationId: 'c-billing' })).map(keyOf)).toEqual(['c-billing/create_refund']);
    expect(await search('refund', { conversationId: 'c-code' })).toEqual([]);
    const window = await search('git status', { from: Date.parse(at(3)), to: Date.parse(at(4)) });
    expect(window.map(keyOf)).toEqual(['c-code/run_shell']);
    expect((await search('git status', { to: Date.parse(at(3)) })).map(keyOf)).toEqual(['c-code/git_status']);
    expect((await search('git status', { from: Date.parse(at(3, 1)) })).map(keyOf)).toEqual([]);
    // The widest period a google.protobuf.Timestamp can express is a valid filter.
    const widest = await search('git status', { from: Date.parse('0001-01-01T00:00:00Z'), to: Date.parse('9999-12-31T23:59:59.999Z') });
    expect(widest.map(keyOf)).toEqual((await search('git status')).map(keyOf));
  });

  it('cannot find a redacted value by its original, nor anything a policy kept out of the row', async () => {
    for (const query of ['ann.lee@example.org', '"ann.lee@example.org"', 'ann.lee', 'example.org', 'ann']) {
      expect(await search(query)).toEqual([]);
    }
    const [mail] = await search('welcome');
    expect(mail.invocation.toolName).toBe('send_email');
    expect(mail.snippet).not.toContain('ann.lee');
    expect(mail.snippet).toContain('[REDACTED:email]');
    for (const query of ['zebracodeword', 'zebrasecret', 'kv/prod', 'probeargument', 'proberesult']) {
      expect(await search(query)).toEqual([]);
    }
    // The tool name is kept, so that is all such an invocation can be found by, and all its snippet shows.
    const [vault] = await search('vault_read');
    expect(vault.invocation).toMatchObject({ toolName: 'vault_read', persist: 'none' });
    expect(vault.snippet).not.toMatch(/zebra|kv/);
  });

  it('never cuts a redaction marker in a snippet', async () => {
    // PostgreSQL's excerpt of 30 words ends inside the marker ...
    const [raw] = await new PostgresAuditReader(db.pool).searchInvocations({ tenantId: 'acme', query: 'quokka', match: 'words', limit: 1 });
    expect(raw.snippet).toMatch(/\[REDACTED:email$/);
    // ... and the answer shows it whole.
    const [hit] = await search('quokka');
    expect(hit.invocation.toolName).toBe('notify');
    expect(hit.snippet).toBe(`${raw.snippet}]`);
  });

  it('answers odd queries without an error: quotes, operators, punctuation only, very long', async () => {
    const odd = [
      '"',
      '""',
      '"unclosed phrase',
      'or',
      'OR OR',
      '-',
      '--',
      '-git',
      '!!!',
      '&|!():*<->',
      "'; DROP TABLE invocations; --",
      '\\',
      '\\n',
      '*',
      'src/',
      '/',
      '//',
      'a/b/c/d/e',
      '…',
      '😀',
      'refund:*',
      'refund & invoice',
      '(refund',
      'x'.repeat(5_000),
      'invoice '.repeat(2_000),
      '"refund '.repeat(300),
      '\u0000refund',
    ];
    for (const query of odd) {
      const hits = await search(query);
      expect(Array.isArray(hits)).toBe(true);
      expect(hits.every((h) => h.invocation.tenantId === 'acme')).toBe(true);
    }
    // Punctuation alone has no words to look for, and a control character is only a blank.
    expect(await search('!!!')).toEqual([]);
    expect((await search('\u0000refund')).map(keyOf)).toEqual((await search('refund')).map(keyOf));
    // The long query is cut, not refused: its first words still search.
    expect((await search('invoice '.repeat(2_000))).map(keyOf).sort()).toEqual(['c-billing/create_refund', 'c-billing/fetch_page']);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM invocations')).rows[0].n).toBe(8 + 2 + 1 + 120);
    await expect(search('   ')).rejects.toThrow('query is required');
    await expect(audit.execute({ tenantId: '', query: 'x' })).rejects.toThrow('tenant_id is required');
    await expect(search('x', { from: 2, to: 1 })).rejects.toThrow('from must be before to');
  });

  it('makes a document of words weighted by where they came from, and keeps its index in a copy of the table', async () => {
    const { rows } = await db.pool.query(
      `SELECT invocation_search_document('read_file', '{"path": "lib/util.ts", "script": "cd lib\\nmake"}', '"line one\\nline two"')::text AS document`,
    );
    // Weights by where a word came from; the path in parts; a newline a blank (not "nmake" or "nline"), in JSON text or not.
    expect(rows[0].document).toBe(
      "'cd':7B 'file':2A 'lib':4B,8B 'line':10C,12C 'make':9B 'one':11C 'path':3B 'read':1A 'script':6B 'two':13C 'util.ts':5B",
    );
    // A rebuild makes its tables this way: the tenant-led index comes along.
    await db.pool.query('CREATE TABLE invocation_search_copy (LIKE invocation_search INCLUDING ALL)');
    const copied = await db.pool.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'invocation_search_copy' AND indexdef LIKE '%USING gin (tenant_id, document)%'`,
    );
    expect(copied.rows).toHaveLength(1);
    await db.pool.query('DROP TABLE invocation_search_copy');
  });

  it('follows the recording: a later invocation is found once the projection has applied it, its document rewritten when its result arrives', async () => {
    const late = { tenantId: 'acme', conversationId: 'c-late', runId: 'r1' };
    const store = new PostgresRecordingStore(db.pool, parsed.policy.redaction);
    const record = (event: ToolEvent, offset: number) =>
      store.recordBatch({
        consumerGroup: 'g',
        topic: 't',
        partition: 1,
        events: [{ offset: String(offset), event }],
        nextOffset: String(offset + 1),
      });
    await record(
      toolCall(late, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolName: 'lookup_parcel',
        arguments: { parcel: 'wombatparcel' } as never,
        occurredAt: at(50),
      }),
      0,
    );
    expect(await search('wombatparcel')).toEqual([]);
    await catchUpSearch(db.pool);
    expect((await search('wombatparcel')).map(keyOf)).toEqual(['c-late/lookup_parcel']);
    await record(
      toolResult(late, { roundIndex: 0, sequenceIndex: 0, result: 'delivered to the numbatdepot' as never, occurredAt: at(51) }),
      1,
    );
    await catchUpSearch(db.pool);
    expect((await search('numbatdepot')).map(keyOf)).toEqual(['c-late/lookup_parcel']);
  });

  it('answers 20 hits by default and at most 100, in the same stable order every time', async () => {
    expect(await search('bulk_probe')).toHaveLength(20);
    const most = await search('bulk_probe', { limit: 1_000 });
    expect(most).toHaveLength(100);
    const seven = await search('bulk_probe', { limit: 7 });
    expect(seven.map((h) => h.invocation.sequenceIndex)).toEqual(most.slice(0, 7).map((h) => h.invocation.sequenceIndex));
    expect((await search('bulk_probe', { limit: 1_000 })).map((h) => h.invocation.sequenceIndex)).toEqual(
      most.map((h) => h.invocation.sequenceIndex),
    );
    // Equal scores: newest first.
    const times = most.map((h) => Date.parse(h.invocation.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    await expect(search('bulk_probe', { limit: -1 })).rejects.toThrow('limit must be a whole number, 0 or more');
  });

  it('ranks only the newest matches of a very common word: an older, better match is left out', async () => {
    const scope = { tenantId: 'bound', conversationId: 'c-common', runId: 'r1' };
    // The oldest invocation names the word in its tool name, the best place; then more newer ones mention it in a result.
    const events: ToolEvent[] = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'kiwiword_lookup', arguments: {}, occurredAt: at(0) }),
    ];
    for (let i = 1; i <= SEARCH_RANKING_BOUND; i += 1) {
      const occurredAt = new Date(Date.parse(at(1)) + i * 1_000).toISOString();
      events.push(toolCall(scope, { roundIndex: i, sequenceIndex: 0, toolName: 'fetch_page', arguments: { n: i }, occurredAt }));
      events.push(toolResult(scope, { roundIndex: i, sequenceIndex: 0, result: `${filler(60, i)} kiwiword` as never, occurredAt }));
    }
    await new PostgresRecordingStore(db.pool).recordBatch({
      consumerGroup: 'g',
      topic: 't',
      partition: 2,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
    await catchUpSearch(db.pool);
    const hits = await audit.execute({ tenantId: 'bound', query: 'kiwiword', limit: 100 });
    expect(hits).toHaveLength(100);
    expect(hits.map((h) => h.invocation.toolName)).not.toContain('kiwiword_lookup');
    // Narrowed by time to where it lies, the better match is found and ranked first.
    const older = await audit.execute({ tenantId: 'bound', query: 'kiwiword', to: Date.parse(at(1)) });
    expect(older[0].invocation.toolName).toBe('kiwiword_lookup');
  });
});
