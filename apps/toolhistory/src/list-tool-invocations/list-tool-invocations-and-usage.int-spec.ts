import type { StoredToolEvent } from '@toolhistory/contract';
import { PostgresAuditReader, PostgresRecordingStore } from '@toolhistory/persistence';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { runCompleted, runCompletedV1, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { GetUsage } from '../get-usage/get-usage';
import { ListToolInvocations } from './list-tool-invocations';

const at = (minute: number, second = 0) => `2026-11-20T10:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;

describe('ListToolInvocations and GetUsage (real PostgreSQL)', () => {
  let db: FreshSchema;
  let audit: { listInvocations: ListToolInvocations['execute']; usage: GetUsage['execute'] };

  beforeAll(async () => {
    db = await freshSchema('audit');
    const reader = new PostgresAuditReader(db.pool);
    const [list, usage] = [new ListToolInvocations(reader), new GetUsage(reader)];
    audit = { listInvocations: (query, signal) => list.execute(query, signal), usage: (request, signal) => usage.execute(request, signal) };
    const events: StoredToolEvent[] = [];
    // 2 conversations x 3 runs x 5 calls; every 4th call fails, every 7th has no result yet.
    let n = 0;
    for (const conversationId of ['c-a', 'c-b']) {
      for (const runId of ['r1', 'r2', 'r3']) {
        const scope = { tenantId: 'acme', conversationId, runId };
        for (let seq = 0; seq < 5; seq += 1) {
          n += 1;
          const toolName = seq % 2 === 0 ? 'git_status' : 'run_sql';
          events.push(toolCall(scope, { roundIndex: 0, sequenceIndex: seq, toolName, occurredAt: at(n % 60, 0) }));
          if (n % 7 !== 0)
            events.push(toolResult(scope, { roundIndex: 0, sequenceIndex: seq, isError: n % 4 === 0, occurredAt: at(n % 60, n % 7) }));
        }
        // 100 input and 10 output tokens per run, whether reported as one schemaVersion 1 total or per service call.
        const twoCalls = [
          { inputTokens: 60, outputTokens: 4, model: 'model-a' },
          { inputTokens: 40, outputTokens: 6, model: 'model-b' },
        ];
        events.push(
          runId === 'r2'
            ? runCompletedV1(scope, { occurredAt: at(n % 60, 30), usage: { inputTokens: 100, outputTokens: 10 } })
            : runCompleted(scope, { occurredAt: at(n % 60, 30), usage: twoCalls }),
        );
      }
    }
    events.push(
      toolCall({ tenantId: 'other', conversationId: 'c-a', runId: 'r1' }, { roundIndex: 0, sequenceIndex: 0, occurredAt: at(1) }),
    );
    const store = new PostgresRecordingStore(db.pool);
    await store.recordBatch({
      consumerGroup: 'g',
      topic: 't',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
  });
  afterAll(() => db.drop());

  it('walks every invocation of a tenant exactly once, in a stable order, page by page', async () => {
    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await audit.listInvocations({ tenantId: 'acme', pageSize: 4, pageToken });
      seen.push(...page.invocations.map((i) => `${i.conversationId}/${i.runId}/${i.sequenceIndex}`));
      expect(page.invocations.length).toBeLessThanOrEqual(4);
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken);
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
    expect(pages).toBe(8);
    const all = await audit.listInvocations({ tenantId: 'acme', pageSize: 1_000 });
    expect(all.invocations.map((i) => `${i.conversationId}/${i.runId}/${i.sequenceIndex}`)).toEqual(seen);
    const times = all.invocations.map((i) => Date.parse(i.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('lists the calls of a batch recorded in the same instant by round, then by their place in the batch, across pages', async () => {
    const scope = { tenantId: 'same-instant', conversationId: 'c', runId: 'r' };
    // Call ids sort against the order of the batch (call_l for sequence 0 ... call_a for 11), and round 1 before round 0.
    const events = [1, 0].flatMap((roundIndex) =>
      Array.from({ length: 12 }, (_, sequenceIndex) =>
        toolCall(scope, {
          roundIndex,
          sequenceIndex,
          toolCallId: `call_${roundIndex}_${String.fromCharCode(108 - sequenceIndex)}`,
          occurredAt: at(30),
        }),
      ),
    );
    await new PostgresRecordingStore(db.pool).recordBatch({
      consumerGroup: 'g',
      topic: 'same-instant',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
    const listed: string[] = [];
    let pageToken = '';
    do {
      const page = await audit.listInvocations({ tenantId: 'same-instant', pageSize: 5, pageToken });
      listed.push(...page.invocations.map((i) => `${i.roundIndex}/${i.sequenceIndex}`));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(listed).toEqual([0, 1].flatMap((round) => Array.from({ length: 12 }, (_, seq) => `${round}/${seq}`)));
  });

  it('filters by conversation, run, tool, status and time, and reports duration and redaction counts', async () => {
    const one = await audit.listInvocations({ tenantId: 'acme', conversationId: 'c-b', runId: 'r2', toolName: 'run_sql' });
    expect(one.invocations.map((i) => i.sequenceIndex)).toEqual([1, 3]);
    expect(one.invocations[0]).toMatchObject({
      tenantId: 'acme',
      toolName: 'run_sql',
      persist: 'full',
      argumentRedactions: {},
      resultRedactions: {},
    });

    const pending = await audit.listInvocations({ tenantId: 'acme', status: 'pending' });
    expect(pending.invocations).toHaveLength(4);
    expect(pending.invocations.every((i) => i.completedAt === null && i.durationMs === null)).toBe(true);
    const errors = await audit.listInvocations({ tenantId: 'acme', status: 'error' });
    expect(errors.invocations.every((i) => i.isError === true)).toBe(true);
    const succeeded = await audit.listInvocations({ tenantId: 'acme', status: 'succeeded' });
    expect(pending.invocations.length + errors.invocations.length + succeeded.invocations.length).toBe(30);
    expect(succeeded.invocations.every((i) => i.durationMs !== null && i.durationMs >= 0)).toBe(true);

    const window = await audit.listInvocations({ tenantId: 'acme', from: Date.parse(at(10)), to: Date.parse(at(20)) });
    expect(window.invocations).toHaveLength(10);
    expect(window.invocations.every((i) => Date.parse(i.at) >= Date.parse(at(10)) && Date.parse(i.at) < Date.parse(at(20)))).toBe(true);
  });

  it('refuses what it cannot answer, naming the field', async () => {
    await expect(audit.listInvocations({ tenantId: '' })).rejects.toThrow('tenant_id is required');
    const page = await audit.listInvocations({ tenantId: 'acme', pageSize: 2 });
    await expect(audit.listInvocations({ tenantId: 'acme', toolName: 'run_sql', pageToken: page.nextPageToken })).rejects.toThrow(
      /other filters/,
    );
    await expect(audit.listInvocations({ tenantId: 'acme', from: 2, to: 1 })).rejects.toThrow('from must be before to');
    await expect(audit.usage({ tenantId: 'acme', bucket: 'hour' })).rejects.toThrow('from and to are required');
  });

  it('reports usage per bucket and tool with errors and duration percentiles, and the tokens of the period', async () => {
    const report = await audit.usage({
      tenantId: 'acme',
      from: Date.parse('2026-11-20T00:00:00Z'),
      to: Date.parse('2026-11-21T00:00:00Z'),
      bucket: 'hour',
    });
    expect(report.rows.map((r) => [r.bucketStart, r.toolName])).toEqual([
      ['2026-11-20T10:00:00+00:00', 'git_status'],
      ['2026-11-20T10:00:00+00:00', 'run_sql'],
    ]);
    const [git, sql] = report.rows;
    expect(git.calls + sql.calls).toBe(30);
    expect(git.calls).toBe(18);
    expect(git.errors + sql.errors).toBe(6); // n = 4, 8, ..., 24 (28 has no result yet)
    expect(git.p50DurationMs).toBeGreaterThanOrEqual(1_000);
    expect(git.p95DurationMs).toBeGreaterThanOrEqual(git.p50DurationMs!);
    expect(git.p95DurationMs).toBeLessThanOrEqual(6_000);
    expect(report).toMatchObject({ inputTokens: 600, outputTokens: 60 });
  });
});
