import type { Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { HistoryFormat } from '../libs/grpc-api/src';
import type { FreshSchema } from './support/fresh-schema';
import { toolHistoryClient, type ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

const POLICY = {
  defaults: { freshnessSeconds: 3600 },
  tools: { web_search: { citations: { items: '$.results[*]', number: '$.sourceNumber' } } },
};

const searchResult = (query: string) => ({
  query,
  results: [1, 2, 3, 4, 5].map((n) => ({ sourceNumber: n, title: `${query} source ${n}`, snippet: `What source ${n} says. `.repeat(8) })),
});

describe('citation compaction end to end: the cited sources of a completed run, through the broker and gRPC', () => {
  let stack: RunningStack;
  let producer: Producer;
  let db: FreshSchema;
  let client: ToolHistoryTestClient;
  const tenantId = uniqueName('tenant');
  const cited = uniqueName('conv-cited');
  const uncited = uniqueName('conv-uncited');
  const run = (conversationId: string, runId: string) => ({ tenantId, conversationId, runId, channel: 'support' });

  /** One web_search of five sources, then the run's end saying what its answer cites (or not saying). */
  const searchRun = (conversationId: string, runId: string, citedSources?: number[]): ToolEvent[] => [
    toolCall(run(conversationId, runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: `call_${runId}`,
      toolName: 'web_search',
      arguments: { q: runId },
    }),
    toolResult(run(conversationId, runId), { roundIndex: 0, sequenceIndex: 0, toolCallId: `call_${runId}`, result: searchResult(runId) }),
    runCompleted(run(conversationId, runId), citedSources === undefined ? {} : { citedSources }),
  ];

  // Recorded a minute ago, one second apart, so every result is fresh for replay.
  const recent = (trace: ToolEvent[]) =>
    trace.map((e, i) => ({ ...e, occurredAt: new Date(Date.now() - 60_000 + i * 1_000).toISOString() }));
  const events = recent([
    ...searchRun(cited, 'r1', [4, 2]),
    ...searchRun(cited, 'r2'),
    ...searchRun(uncited, 'r1'),
    ...searchRun(uncited, 'r2'),
  ]);

  beforeAll(async () => {
    stack = await startRunningStack('citations', { policy: POLICY });
    db = stack.db;
    client = toolHistoryClient(Number(stack.address.split(':').at(-1)));
    producer = await connectedProducer(testKafka());
    await publishEvents(producer, stack.topic, events);
    await waitFor(
      () => db.pool.query("SELECT count(*)::int AS n FROM runs WHERE status = 'completed'").then((r) => r.rows[0].n),
      (n) => n === 4,
      { what: 'all four runs completed in the read model' },
    );
  });

  afterAll(async () => {
    client?.close();
    await producer?.disconnect();
    await stack?.stop();
  });

  const replay = (conversationId: string, format: HistoryFormat) =>
    client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId, format }, { deadline: new Date(Date.now() + 5_000) });
  const numbersIn = (resultJson: string) => (JSON.parse(resultJson) as ReturnType<typeof searchResult>).results.map((r) => r.sourceNumber);

  it.each([HistoryFormat.HISTORY_FORMAT_OPENAI_CHAT, HistoryFormat.HISTORY_FORMAT_ANTHROPIC_MESSAGES])(
    'keeps only the cited sources of the run that cited, numbers unchanged; replays the other run whole (%s)',
    async (format) => {
      const response = await replay(cited, format);
      const [first, second] = response.turns.map((t) => t.rounds[0].calls[0]);
      expect(numbersIn(first.result)).toEqual([2, 4]);
      expect(first.compacted_items).toBe(3);
      expect(numbersIn(second.result)).toEqual([1, 2, 3, 4, 5]);
      expect(second.compacted_items).toBe(0);
      // The provider messages carry the same compacted result.
      const messages = response.turns[0].messages_json;
      expect(messages).toContain('r1 source 2');
      expect(messages).toContain('r1 source 4');
      for (const n of [1, 3, 5]) expect(messages).not.toContain(`r1 source ${n}`);
      // The same runs without citedSources cost more tokens.
      const whole = await replay(uncited, format);
      expect(whole.turns.flatMap((t) => t.rounds.map((r) => r.calls[0].compacted_items))).toEqual([0, 0]);
      expect(response.history_tokens).toBeLessThan(whole.history_tokens);
    },
  );

  it('keeps every stored source in the audit view', async () => {
    const { invocations } = await client.listToolInvocations(
      { tenant_id: tenantId, conversation_id: cited },
      { deadline: new Date(Date.now() + 5_000) },
    );
    const byRun = invocations.map((i) => [i.run_id, numbersIn(i.result)] as const).sort(([a], [b]) => a.localeCompare(b));
    expect(byRun).toEqual([
      ['r1', [1, 2, 3, 4, 5]],
      ['r2', [1, 2, 3, 4, 5]],
    ]);
  });

  it('keeps what the run cites, sorted and once each, on its row', async () => {
    const { rows } = await db.pool.query('SELECT run_id, cited_sources FROM runs WHERE conversation_id = $1 ORDER BY run_id', [cited]);
    expect(rows).toEqual([
      { run_id: 'r1', cited_sources: [2, 4] },
      { run_id: 'r2', cited_sources: null },
    ]);
  });
});
