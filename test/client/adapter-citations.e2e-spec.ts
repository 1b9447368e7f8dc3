import { tool as langChainTool } from '@langchain/core/tools';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import { stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { type ReplayHistory, ToolEventPublisher, ToolHistoryClient } from '../../libs/client/src';
import { recordedGenerateText } from '../../libs/client/src/ai-sdk';
import { ToolHistoryCallbackHandler } from '../../libs/client/src/langchain';
import { call, ScriptedChatModel, usage as langChainUsage } from '../../libs/client/src/langchain/scripted-chat-model.fixture';
import { startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const POLICY = {
  defaults: { freshnessSeconds: 3600 },
  tools: { web_search: { citations: { items: '$.results[*]', number: '$.sourceNumber' } } },
};

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** One search of five numbered sources, then `answer`: the agent loop's two model calls. */
const searchThenAnswer = (answer: string) =>
  new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'call_search', toolName: 'web_search', input: JSON.stringify({ q: 'rain in Paris' }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      { content: [{ type: 'text', text: answer }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ] satisfies GenerateResult[],
  });

const searchResults = (q: string) => ({
  query: q,
  results: [1, 2, 3, 4, 5].map((n) => ({ sourceNumber: n, title: `${q}, source ${n}`, snippet: `What source ${n} says.` })),
});

const tools = {
  web_search: tool({
    description: 'Searches the web; cite a result as [sourceN]',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => searchResults(q),
  }),
};

const ANSWER = 'Rain is likely [source2], as the radar shows [source4].';

describe('@toolhistory/client adapters: citedSourcesFromAnswer compacts the next replay, through the real broker and service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('adapter_citations', { policy: POLICY }));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  /** One turn of the AI SDK agent loop, recorded by the adapter; then the replay once the run's answer is in it. */
  async function turn(citedSourcesFromAnswer: boolean): Promise<ReplayHistory<unknown>> {
    const conversationId = uniqueName('conv');
    const run = publisher.run({ tenantId, conversationId, channel: 'web', runId: 'turn-1' });
    const result = await recordedGenerateText(
      run,
      { model: searchThenAnswer(ANSWER), tools, prompt: 'Will it rain in Paris?', stopWhen: stepCountIs(3) },
      { assistantMessageId: 'msg-answer', citedSourcesFromAnswer },
    );
    expect(result.text).toBe(ANSWER);
    return waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }),
      (history) => history.turns.some((t) => t.assistantMessageId === 'msg-answer'),
      { what: `the completed run replayed in ${conversationId}` },
    );
  }

  const searchCallOf = (history: ReplayHistory<unknown>) => {
    const [call] = history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls));
    return { numbers: (JSON.parse(call.result) as { results: Array<{ sourceNumber: number }> }).results.map((r) => r.sourceNumber), call };
  };

  it('keeps exactly the two sources the answer cites (three compacted away); the provider messages carry only those', async () => {
    const history = await turn(true);

    const { numbers, call } = searchCallOf(history);
    expect(numbers).toEqual([2, 4]);
    expect(call.compactedItems).toBe(3);
    const messages = JSON.stringify(history.messages);
    expect(messages).toContain('source 2');
    expect(messages).toContain('source 4');
    for (const n of [1, 3, 5]) expect(messages).not.toContain(`source ${n}`);
  });

  it("compacts a LangChain agent's result too, which LangChain records as the JSON text of the tool's object", async () => {
    const conversationId = uniqueName('conv');
    const webSearch = langChainTool(async ({ q }: { q: string }) => searchResults(q), {
      name: 'web_search',
      description: 'Searches the web; cite a result as [sourceN]',
      schema: z.object({ q: z.string() }),
    });
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_search', 'web_search', { q: 'rain in Paris' })], usage_metadata: langChainUsage(10, 5) },
      { id: 'msg-answer', content: ANSWER, usage_metadata: langChainUsage(20, 10) },
    ]);
    const handler = new ToolHistoryCallbackHandler(
      { publisher, scope: { tenantId, conversationId, channel: 'web', runId: 'turn-1' } },
      { citedSourcesFromAnswer: true },
    );
    await createReactAgent({ llm: model, tools: [webSearch] }).invoke(
      { messages: [{ role: 'user', content: 'Rain?' }] },
      { callbacks: [handler] },
    );
    await handler.settled();

    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }),
      (h) => h.turns.some((t) => t.assistantMessageId === 'msg-answer'),
      { what: `the LangChain run replayed in ${conversationId}` },
    );
    const { numbers, call: replayed } = searchCallOf(history);
    expect(numbers).toEqual([2, 4]);
    expect(replayed.compactedItems).toBe(3);
    // The listing keeps what was recorded: the whole text.
    const listed = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId })) listed.push(invocation);
    expect(listed).toHaveLength(1);
    expect(listed[0].result.match(/sourceNumber/g)).toHaveLength(5);
  });

  it('replays the result whole when the option is off', async () => {
    const { numbers, call } = searchCallOf(await turn(false));

    expect(numbers).toEqual([1, 2, 3, 4, 5]);
    expect(call.compactedItems).toBe(0);
  });
});
