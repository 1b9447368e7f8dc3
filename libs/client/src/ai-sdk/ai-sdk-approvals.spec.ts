import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { type PendingApproval, Round } from '../generated/toolhistory/v1/toolhistory';
import {
  approvalAnswers,
  pendingApprovalMessages,
  replayedApprovalId,
  resumedResults,
  splitResumedStep,
  toolApprovalResponse,
} from './ai-sdk-approvals';
import { stepInvocations } from './ai-sdk-step-mapper';
import { responseMessagesOf, thrownErrorText } from './sdk-versions.fixture';

// The SDK's own loop, driven by its scripted test model: the messages are the shapes the SDK really builds and reads.
type ModelResponse = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const calls = (...list: Array<[id: string, name: string, input: object]>): ModelResponse => ({
  content: list.map(([toolCallId, toolName, input]) => ({
    type: 'tool-call' as const,
    toolCallId,
    toolName,
    input: JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const answer = (text: string): ModelResponse => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});

const tools = {
  get_order: tool({ inputSchema: z.object({ orderId: z.string() }), execute: async ({ orderId }) => `order ${orderId}: shipped` }),
  refund: tool({
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ orderId, amount }) => ({ refunded: amount, orderId }),
  }),
  cancel: tool({
    inputSchema: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async (): Promise<string> => {
      throw new Error('already shipped');
    },
  }),
};

/** One generateText call; the messages the model's first step was prepared with (what prepareStep sees at step 0). */
async function call(messages: ModelMessage[], responses: ModelResponse[]) {
  const model = new MockLanguageModelV3({ doGenerate: responses });
  let firstStep: ModelMessage[] = [];
  const result = await generateText({
    model,
    tools,
    messages,
    stopWhen: stepCountIs(10),
    prepareStep: ({ stepNumber, messages: prepared }) => {
      if (stepNumber === 0) firstStep = prepared;
      return undefined;
    },
  });
  return { result, firstStep };
}

const user: ModelMessage = { role: 'user', content: 'Refund A-1 and cancel B-2' };

/**
 * Run 1: a round of one plain call, then a round of two calls that need
 * approval; the loop stops there. The host keeps the messages as JSON, as a
 * store does (the SDK's revalidation of approved input compares
 * constructors, which structuredClone'd objects fail inside jest's sandbox).
 */
async function runAskingForApproval() {
  const { result } = await call(
    [user],
    [
      calls(['c0', 'get_order', { orderId: 'A-1' }]),
      calls(['c1', 'refund', { orderId: 'A-1', amount: 5 }], ['c2', 'cancel', { orderId: 'B-2' }]),
    ],
  );
  return { steps: result.steps, history: asStored([user, ...responseMessagesOf(result)]) };
}

const asStored = (messages: ModelMessage[]): ModelMessage[] => JSON.parse(JSON.stringify(messages)) as ModelMessage[];

function approvalIdOf(messages: readonly ModelMessage[], toolCallId: string): string {
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) return part.approvalId;
  }
  throw new Error(`no approval request for ${toolCallId}`);
}

describe('stepInvocations of a step that asks for approval', () => {
  it("gives each call that needs approval the SDK's approval id, and no result", async () => {
    const { steps, history } = await runAskingForApproval();

    expect(stepInvocations(steps[1])).toEqual([
      {
        sequenceIndex: 0,
        toolCallId: 'c1',
        toolName: 'refund',
        arguments: { orderId: 'A-1', amount: 5 },
        approvalId: approvalIdOf(history, 'c1'),
      },
      { sequenceIndex: 1, toolCallId: 'c2', toolName: 'cancel', arguments: { orderId: 'B-2' }, approvalId: approvalIdOf(history, 'c2') },
    ]);
  });
});

describe('approvalAnswers', () => {
  it('finds the answers of the last tool message, each with its call and the place of the call in the run that asked', async () => {
    const { history } = await runAskingForApproval();
    const answers: ModelMessage = {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: false, reason: 'it has shipped' },
        { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: true },
      ],
    };

    expect(approvalAnswers([...history, answers])).toEqual([
      {
        approvalId: approvalIdOf(history, 'c2'),
        toolCallId: 'c2',
        toolName: 'cancel',
        approved: false,
        reason: 'it has shipped',
        roundIndex: 1,
        sequenceIndex: 1,
        positionFrom: 'messages',
      },
      {
        approvalId: approvalIdOf(history, 'c1'),
        toolCallId: 'c1',
        toolName: 'refund',
        approved: true,
        roundIndex: 1,
        sequenceIndex: 0,
        positionFrom: 'messages',
      },
    ]);
  });

  it.each<[string, (history: ModelMessage[]) => ModelMessage[], Partial<PendingApproval>[], object]>([
    [
      "the host passes the replay's pendingApprovals, which name it",
      (history) => history,
      [{ toolCallId: 'c1', roundIndex: 7, sequenceIndex: 3 }],
      { roundIndex: 7, sequenceIndex: 3, positionFrom: 'pending-approvals' },
    ],
    [
      'an earlier turn of the conversation before the run: counted from the last user message',
      (history) => [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'old', toolName: 'get_order', input: {} }] },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'old', toolName: 'get_order', output: { type: 'text', value: 'x' } }],
        },
        { role: 'assistant', content: 'done' },
        ...history,
      ],
      [],
      { roundIndex: 1, sequenceIndex: 0, positionFrom: 'messages' },
    ],
  ])('takes the position when %s', async (_case, arrange, pending, expected) => {
    const { history } = await runAskingForApproval();
    const answers: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: true }],
    };

    expect(approvalAnswers([...arrange(history), answers], pending as PendingApproval[])).toEqual([
      expect.objectContaining({ toolCallId: 'c1', ...expected }),
    ]);
  });

  it('counts the rounds of a run that resumed from the answers it started with', async () => {
    const { history } = await runAskingForApproval();
    // Run 2 resumes c1 and c2, then makes a round of its own that asks again.
    const answers1: ModelMessage = {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: true },
        { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: true },
      ],
    };
    const run2 = await call([...history, answers1], [calls(['c3', 'refund', { orderId: 'C-3', amount: 9 }])]);
    const history2 = [...history, answers1, ...asStored(responseMessagesOf(run2.result))];
    const answers2: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: approvalIdOf(history2, 'c3'), approved: true }],
    };

    expect(approvalAnswers([...history2, answers2])).toEqual([
      expect.objectContaining({ toolCallId: 'c3', roundIndex: 0, sequenceIndex: 0, positionFrom: 'messages' }),
    ]);
  });

  it.each<[string, ModelMessage[]]>([
    ['the last message is no tool message', [{ role: 'user', content: 'hi' }]],
    [
      'an answer for an unknown approval id',
      [{ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'nope', approved: true }] }],
    ],
  ])('finds none when %s', (_case, messages) => {
    expect(approvalAnswers(messages)).toEqual([]);
  });

  it('leaves out a call the last message already has a result for, and answers a call once', async () => {
    const { history } = await runAskingForApproval();
    const id = approvalIdOf(history, 'c1');
    const answers: ModelMessage = {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: id, approved: true },
        { type: 'tool-approval-response', approvalId: id, approved: false },
        { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: true },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'cancel', output: { type: 'text', value: 'ran elsewhere' } },
      ],
    };

    expect(approvalAnswers([...history, answers]).map((a) => [a.toolCallId, a.approved])).toEqual([['c1', true]]);
  });
});

describe('pendingApprovalMessages and toolApprovalResponse', () => {
  const pending = (toolCallId: string, roundIndex: number, sequenceIndex: number, runId = 'run-1'): PendingApproval => ({
    toolCallId,
    toolName: 'refund',
    argumentsJson: JSON.stringify({ orderId: toolCallId, amount: 5 }),
    runId,
    reason: '',
    roundIndex,
    sequenceIndex,
  });

  it('gives one assistant message per round: its calls, then their approval requests, with ids that carry the position', () => {
    expect(pendingApprovalMessages([pending('a', 1, 0), pending('b', 1, 2), pending('c', 0, 0, 'run-2')])).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 'refund', input: { orderId: 'a', amount: 5 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'refund', input: { orderId: 'b', amount: 5 } },
          { type: 'tool-approval-request', approvalId: 'toolhistory:1:0:a', toolCallId: 'a' },
          { type: 'tool-approval-request', approvalId: 'toolhistory:1:2:b', toolCallId: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c', toolName: 'refund', input: { orderId: 'c', amount: 5 } },
          { type: 'tool-approval-request', approvalId: 'toolhistory:0:0:c', toolCallId: 'c' },
        ],
      },
    ]);
  });

  it("starts a round's message with its response as the model gave it: reasoning parts, text, then calls with their options", () => {
    const round = Round.fromPartial({
      roundIndex: 1,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      text: 'Refunding now.',
      reasoningJson: JSON.stringify([{ type: 'thinking', thinking: 'It rained all week.', signature: 'EqQB' }]),
    });
    const signed = Round.fromPartial({
      roundIndex: 0,
      provider: 'google',
      model: 'gemini-3-pro-preview',
      reasoningJson: JSON.stringify([{ text: 'Refund it.', thought: true }]),
      callSignatures: { g: 'CiQB' },
    });
    expect(
      pendingApprovalMessages([
        { ...pending('a', 1, 0), round },
        { ...pending('b', 1, 2), round },
        { ...pending('g', 0, 0, 'run-2'), round: signed },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'It rained all week.', providerOptions: { anthropic: { signature: 'EqQB' } } },
          { type: 'text', text: 'Refunding now.' },
          { type: 'tool-call', toolCallId: 'a', toolName: 'refund', input: { orderId: 'a', amount: 5 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'refund', input: { orderId: 'b', amount: 5 } },
          { type: 'tool-approval-request', approvalId: 'toolhistory:1:0:a', toolCallId: 'a' },
          { type: 'tool-approval-request', approvalId: 'toolhistory:1:2:b', toolCallId: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Refund it.' },
          {
            type: 'tool-call',
            toolCallId: 'g',
            toolName: 'refund',
            input: { orderId: 'g', amount: 5 },
            providerOptions: { google: { thoughtSignature: 'CiQB' } },
          },
          { type: 'tool-approval-request', approvalId: 'toolhistory:0:0:g', toolCallId: 'g' },
        ],
      },
    ]);
    // Through Google Vertex the options go under its key.
    const [vertex] = pendingApprovalMessages([{ ...pending('g', 0, 0, 'run-2'), round: signed }], 'google.vertex.chat');
    expect(vertex.content).toContainEqual(
      expect.objectContaining({ toolCallId: 'g', providerOptions: { vertex: { thoughtSignature: 'CiQB' } } }),
    );
  });

  it('lets the SDK run an approved replayed call and deny another; the answers keep the replayed positions', async () => {
    const replayed = [pending('r:1', 2, 1), pending('r2', 2, 2)];
    const messages: ModelMessage[] = [
      user,
      ...pendingApprovalMessages(replayed),
      {
        role: 'tool',
        content: [
          toolApprovalResponse(replayed[0], { approved: true }),
          toolApprovalResponse(replayed[1], { approved: false, reason: 'no' }),
        ],
      },
    ];

    const { result, firstStep } = await call(messages, [answer('Refunded one.')]);

    expect(result.text).toBe('Refunded one.');
    expect(replayedApprovalId(replayed[0])).toBe('toolhistory:2:1:r:1');
    const { input, executed } = splitResumedStep(firstStep);
    expect(input).toEqual(messages);
    const answers = approvalAnswers(input);
    expect(answers).toEqual([
      {
        approvalId: 'toolhistory:2:1:r:1',
        toolCallId: 'r:1',
        toolName: 'refund',
        approved: true,
        roundIndex: 2,
        sequenceIndex: 1,
        positionFrom: 'approval-id',
      },
      {
        approvalId: 'toolhistory:2:2:r2',
        toolCallId: 'r2',
        toolName: 'refund',
        approved: false,
        reason: 'no',
        roundIndex: 2,
        sequenceIndex: 2,
        positionFrom: 'approval-id',
      },
    ]);
    expect(resumedResults(answers, executed)).toEqual([
      {
        toolCallId: 'r:1',
        toolName: 'refund',
        roundIndex: 2,
        sequenceIndex: 1,
        result: { value: { refunded: 5, orderId: 'r:1' }, isError: false },
      },
    ]);
  });
});

describe('splitResumedStep and resumedResults', () => {
  it("gives the approved calls' results as the model was sent them: a tool that throws is an error", async () => {
    const { history } = await runAskingForApproval();
    const messages: ModelMessage[] = [
      ...history,
      {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: true },
          { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: true },
        ],
      },
    ];

    const { firstStep } = await call(messages, [answer('ok')]);

    const { input, executed } = splitResumedStep(firstStep);
    expect(input).toHaveLength(messages.length);
    expect(resumedResults(approvalAnswers(input), executed)).toEqual([
      {
        toolCallId: 'c1',
        toolName: 'refund',
        roundIndex: 1,
        sequenceIndex: 0,
        result: { value: { refunded: 5, orderId: 'A-1' }, isError: false },
      },
      {
        toolCallId: 'c2',
        toolName: 'cancel',
        roundIndex: 1,
        sequenceIndex: 1,
        result: { value: expect.stringMatching(thrownErrorText('already shipped')), isError: true },
      },
    ]);
  });

  it('finds nothing the SDK added when the call resumes nothing', async () => {
    const { firstStep } = await call([user], [answer('hello')]);

    expect(splitResumedStep(firstStep)).toEqual({ input: [user] });
    expect(resumedResults([], undefined)).toEqual([]);
  });
});
