import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { SEARCH_HISTORY_TOOL_NAME, type SearchHistoryHit, ToolEventPublisher, ToolHistoryClient } from '../../libs/client/src';
import { searchHistoryTool as aiSdkSearchHistoryTool } from '../../libs/client/src/ai-sdk';
import { searchHistoryTool as langChainSearchHistoryTool } from '../../libs/client/src/langchain';
import { call, ScriptedChatModel, usage } from '../../libs/client/src/langchain/scripted-chat-model.fixture';
import { startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const tokens = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const response = (content: GenerateResult['content'], finish: 'tool-calls' | 'stop'): GenerateResult => ({
  content,
  finishReason: { unified: finish, raw: finish },
  usage: tokens,
  warnings: [],
});

/** The hit the search finds in the recorded conversation: the kettle, by part of a word, in the call and the result. */
const kettleHit = (runId: string): Partial<SearchHistoryHit> => ({
  tool: 'boil_water',
  matchedIn: ['call', 'result'],
  snippet: '{"appliance":"**Kett**le"} … the **Kett**le clicked off',
  runId,
  toolCallId: 'call_boil',
});

describe('searchHistoryTool: the model searches its own conversation through the real service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const elsewhere = uniqueName('conv-else');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('search_tool'));
    for (const [conversation, appliance] of [
      [conversationId, 'Kettle'],
      [elsewhere, 'kettle'],
    ] as const) {
      const run = publisher.run({ tenantId, conversationId: conversation, channel: 'web', runId: 'run-1' });
      await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_boil', toolName: 'boil_water', arguments: { appliance } });
      await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_boil', result: `the ${appliance} clicked off` });
      await run.complete({ assistantMessageId: 'm1' });
    }
    await waitFor(
      async () => (await client.searchToolHistory({ tenantId, query: 'kett', match: 'substring' })).hits,
      (hits) => hits.length === 2,
      { what: 'both conversations searchable' },
    );
  });

  afterAll(() => stopClientStack({ stack, publisher, client }));

  it('AI SDK: the model calls search_history, the tool searches only the bound conversation, and the model gets the hits', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async (options) =>
        options.prompt.some((m) => m.role === 'tool')
          ? response([{ type: 'text', text: 'You boiled the kettle earlier.' }], 'stop')
          : response(
              [
                {
                  type: 'tool-call',
                  toolCallId: 'call_search',
                  toolName: SEARCH_HISTORY_TOOL_NAME,
                  input: JSON.stringify({ query: 'kett' }),
                },
              ],
              'tool-calls',
            ),
    });
    const result = await generateText({
      model,
      prompt: 'Did I use the kettle?',
      tools: { [SEARCH_HISTORY_TOOL_NAME]: aiSdkSearchHistoryTool({ client, tenantId, conversationId }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('You boiled the kettle earlier.');
    const toolResult = result.steps[0].toolResults[0];
    expect(toolResult.toolName).toBe(SEARCH_HISTORY_TOOL_NAME);
    const { hits } = toolResult.output as { hits: SearchHistoryHit[] };
    expect(hits).toEqual([expect.objectContaining(kettleHit('run-1'))]);
    expect(Date.parse(hits[0].at!)).not.toBeNaN();
    // The second model call saw the hits as the tool's output.
    const sent = model.doGenerateCalls[1].prompt.flatMap((m) => (m.role === 'tool' ? m.content : []));
    expect(JSON.stringify(sent)).toContain('**Kett**le');
  });

  it('LangChain: a ReAct agent calls search_history and its ToolMessage lists the hit', async () => {
    const model = new ScriptedChatModel([
      {
        content: '',
        tool_calls: [call('call_search', SEARCH_HISTORY_TOOL_NAME, { query: 'kettle', match: 'words' })],
        usage_metadata: usage(10, 5),
      },
      { content: 'You boiled the kettle earlier.', usage_metadata: usage(20, 5) },
    ]);
    const agent = createReactAgent({ llm: model, tools: [langChainSearchHistoryTool({ client, tenantId, conversationId })] });
    const result = await agent.invoke({ messages: [new HumanMessage('Did I use the kettle?')] });
    expect(model.boundTools).toEqual([SEARCH_HISTORY_TOOL_NAME]);
    const toolMessage = result.messages.find((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(toolMessage?.name).toBe(SEARCH_HISTORY_TOOL_NAME);
    const { hits } = JSON.parse(String(toolMessage?.content)) as { hits: SearchHistoryHit[] };
    expect(hits).toEqual([
      expect.objectContaining({ ...kettleHit('run-1'), snippet: 'boil_water {"appliance":"**Kettle**"} the **Kettle** clicked off' }),
    ]);
    expect(result.messages.at(-1)?.content).toBe('You boiled the kettle earlier.');
  });

  it('answers a too-short substring as a tool error the model can read', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async (options) =>
        options.prompt.some((m) => m.role === 'tool')
          ? response([{ type: 'text', text: 'ok' }], 'stop')
          : response(
              [
                {
                  type: 'tool-call',
                  toolCallId: 'call_short',
                  toolName: SEARCH_HISTORY_TOOL_NAME,
                  input: JSON.stringify({ query: 'ke', match: 'substring' }),
                },
              ],
              'tool-calls',
            ),
    });
    const result = await generateText({
      model,
      prompt: 'x',
      tools: { [SEARCH_HISTORY_TOOL_NAME]: aiSdkSearchHistoryTool({ client, tenantId, conversationId }) },
      stopWhen: stepCountIs(3),
    });
    const error = result.steps[0].content.find((part) => part.type === 'tool-error');
    expect(String((error as { error: unknown } | undefined)?.error)).toMatch(/at least 3 characters/);
  });
});
