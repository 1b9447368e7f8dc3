import type { ToolEvent } from '@toolhistory/contract';
import { parsePolicyDocument } from '@toolhistory/domain';
import { PostgresAuditReader, PostgresRecordingStore } from '@toolhistory/persistence';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { catchUpSearch } from '../../../../test/support/read-model-queries';
import { toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { SearchToolHistory } from './search-tool-history';

const at = (minute: number, second = 0) => `2026-11-21T09:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;

const parsed = parsePolicyDocument({ tools: { vault_read: { persist: 'none' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));

describe('SearchToolHistory by substring: a literal text anywhere, in any case (real PostgreSQL)', () => {
  let db: FreshSchema;
  let audit: SearchToolHistory;
  const search = (query: string, extra: Partial<Parameters<SearchToolHistory['execute']>[0]> = {}) =>
    audit.execute({ tenantId: 'acme', query, match: 'substring', ...extra });
  const names = async (query: string, extra: Partial<Parameters<SearchToolHistory['execute']>[0]> = {}) =>
    (await search(query, extra)).map((h) => `${h.invocation.conversationId}/${h.invocation.toolName}`);

  beforeAll(async () => {
    db = await freshSchema('substring');
    audit = new SearchToolHistory(new PostgresAuditReader(db.pool));
    const kitchen = { tenantId: 'acme', conversationId: 'c-kitchen', runId: 'r1' };
    const files = { tenantId: 'acme', conversationId: 'c-files', runId: 'r1' };
    const other = { tenantId: 'other', conversationId: 'c-kitchen', runId: 'r1' };
    const pair = (scope: typeof kitchen, seq: number, minute: number, toolName: string, args: unknown, result: unknown): ToolEvent[] => [
      toolCall(scope, { roundIndex: 0, sequenceIndex: seq, toolName, arguments: args as never, occurredAt: at(minute) }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: seq, result: result as never, occurredAt: at(minute, 1) }),
    ];
    const events: ToolEvent[] = [
      ...pair(kitchen, 0, 1, 'boil_water', { appliance: 'Kettle', litres: 1 }, 'The kettle clicked off at 100%'),
      ...pair(kitchen, 1, 2, 'check_stock', { item: 'tea_bags' }, 'tea bags: 12 left (50% of a box)'),
      ...pair(kitchen, 2, 3, 'kettlebell_log', { sets: 3 }, { done: true }),
      ...pair(files, 0, 4, 'read_file', { path: 'C:\\Users\\ann\\notes.txt' }, 'line one\nline two'),
      ...pair(files, 1, 5, 'list_dir', { path: 'src/app_1' }, ['a_b.ts', 'aXb.ts']),
      ...pair(files, 2, 6, 'vault_read', { path: 'kv/kettle' }, 'secretkettle'),
      ...pair(files, 3, 7, 'send_email', { to: 'ann.lee@example.org' }, 'sent'),
      ...pair(other, 0, 1, 'boil_water', { appliance: 'kettle' }, 'kettle boiled'),
    ];
    const store = new PostgresRecordingStore(db.pool, parsed.policy.redaction);
    await store.recordBatch({
      consumerGroup: 'g',
      topic: 't',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
    await catchUpSearch(db.pool);
  });
  afterAll(() => db.drop());

  it('finds a text inside a word, in any case, newest first with score 0', async () => {
    const hits = await search('KETT');
    expect(hits.map((h) => h.invocation.toolName)).toEqual(['kettlebell_log', 'boil_water']);
    expect(hits.every((h) => h.score === 0)).toBe(true);
    expect(hits[1].snippet).toBe(`{"appliance":"**Kett**le","litres":1} … The **kett**le clicked off at 100%`);
    expect(hits[0].snippet).toBe('**kett**lebell_log');
  });

  it('says exactly where it matched: tool name, arguments, result, in that order', async () => {
    const byTool = Object.fromEntries((await search('kett')).map((h) => [h.invocation.toolName, h.matchedIn]));
    expect(byTool).toEqual({ kettlebell_log: ['toolName'], boil_water: ['arguments', 'result'] });
    expect((await search('tea_bags'))[0].matchedIn).toEqual(['arguments']);
    expect((await search('tea bags'))[0].matchedIn).toEqual(['result']);
    expect((await search('_stock'))[0].matchedIn).toEqual(['toolName']);
  });

  it('takes %, _ and \\ literally', async () => {
    expect(await names('100%')).toEqual(['c-kitchen/boil_water']);
    expect(await names('50%')).toEqual(['c-kitchen/check_stock']);
    expect(await names('0% of')).toEqual(['c-kitchen/check_stock']);
    // '_' is not "any one character": a_b.ts is found, aXb.ts is not what matched.
    const underscore = await search('a_b.');
    expect(underscore.map((h) => h.invocation.toolName)).toEqual(['list_dir']);
    expect(underscore[0].snippet).toContain('**a_b.**');
    expect(await search('aXb_')).toEqual([]);
    expect(await search('%%%')).toEqual([]);
    expect(await search('___')).toEqual([]);
    // Arguments are searched as their JSON text, where a backslash is written \\.
    expect(await names('\\\\Users\\\\ann')).toEqual(['c-files/read_file']);
    expect(await search('\\U\\')).toEqual([]);
  });

  it('spans whitespace as written but never two fields', async () => {
    expect(await names('one\nline')).toEqual(['c-files/read_file']);
    // The tool name ends where the arguments begin.
    expect(await search('file{"path')).toEqual([]);
  });

  it('searches only the conversation when one is named, and only the tenant', async () => {
    expect(await names('kettle', { conversationId: 'c-files' })).toEqual([]);
    expect(await names('kettle', { conversationId: 'c-kitchen' })).toEqual(['c-kitchen/kettlebell_log', 'c-kitchen/boil_water']);
    const theirs = await audit.execute({ tenantId: 'other', query: 'kettle', match: 'substring' });
    expect(theirs.map((h) => h.invocation.tenantId)).toEqual(['other']);
    expect((await search('kettle')).every((h) => h.invocation.tenantId === 'acme')).toBe(true);
  });

  it('cannot find what the policy kept out of the row, nor a redacted value by its original', async () => {
    expect(await names('secretkettle')).toEqual([]);
    expect(await names('kv/kettle')).toEqual([]);
    expect(await names('vault_read')).toEqual(['c-files/vault_read']);
    expect(await search('ann.lee')).toEqual([]);
    expect(await search('example.org')).toEqual([]);
    const [mail] = await search('REDACTED:em');
    expect(mail.invocation.toolName).toBe('send_email');
    expect(mail.snippet).toBe('{"to":"[**REDACTED:em**ail]"}');
  });

  it('filters by time and limit like words', async () => {
    expect(await names('kett', { to: Date.parse(at(2)) })).toEqual(['c-kitchen/boil_water']);
    expect(await names('kett', { limit: 1 })).toEqual(['c-kitchen/kettlebell_log']);
    await expect(search('ke')).rejects.toThrow('query must be at least 3 characters to match as a substring');
  });

  it('keeps the substring text and its trigram index, with its pending list, in a rebuild-style copy of the substring table', async () => {
    await db.pool.query('CREATE TABLE invocation_substring_copy (LIKE invocation_substring INCLUDING ALL)');
    const { rows } = await db.pool.query<{ options: string[] }>(
      `SELECT c.reloptions AS options FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname AND c.relnamespace = current_schema()::regnamespace
       WHERE i.schemaname = current_schema() AND i.tablename = 'invocation_substring_copy' AND i.indexdef LIKE '%gin_trgm_ops%'`,
    );
    expect(rows).toHaveLength(1);
    // Trigrams are merged into the index in bulk (migration 021), not one by one as the words index's entries.
    expect(rows[0].options).toEqual(['fastupdate=on', 'gin_pending_list_limit=4096']);
    await db.pool.query('DROP TABLE invocation_substring_copy');
  });
});
