import { HumanMessage } from '@langchain/core/messages';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Round } from '../generated/toolhistory/v1/toolhistory';
import { toLangChainMessages } from './langchain-message-converter';
import { GEMINI_PLACEHOLDER_SIGNATURE } from './langchain-reasoning';
import { recordingRun, tools } from './scripted-chat-model.fixture';
import { ToolHistoryCallbackHandler } from './tool-history-callback-handler';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

type Part = Record<string, unknown>;
type Content = { role: string; parts: Part[] };

/**
 * Gemini's generateContent API on loopback, answering each request with the
 * next scripted parts and keeping every request's contents: the real
 * @langchain/google-genai chat model talks to it as to Google.
 */
async function geminiOnLoopback(replies: Part[][]): Promise<{ server: Server; baseUrl: string; requests: Content[][] }> {
  const requests: Content[][] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests.push((JSON.parse(body) as { contents: Content[] }).contents);
      const parts = replies[requests.length - 1] ?? [{ text: 'No reply scripted.' }];
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const MODEL = 'gemini-3-pro-preview';

/** A Gemini 3 round: a signed thought, the text beside the calls, two parallel calls (only the first signed, as Gemini does). */
const ROUND: Part[] = [
  { text: 'Both lookups at once.', thought: true, thoughtSignature: 'CiQB0e2K-thought' },
  { text: "I'll look up the order and the customer." },
  { functionCall: { id: 'call_a', name: 'get_order', args: { orderId: 'A-1' } }, thoughtSignature: 'CiQB0e2Kb8-first-call' },
  { functionCall: { id: 'call_b', name: 'get_customer', args: { id: 7 } } },
];

describe('LangChain.js with Gemini (@langchain/google-genai against a loopback Gemini API)', () => {
  let gemini: Awaited<ReturnType<typeof geminiOnLoopback>>;
  afterEach(() => new Promise<void>((resolve) => gemini.server.close(() => resolve())));

  const model = (baseUrl: string) => new ChatGoogleGenerativeAI({ model: MODEL, apiKey: 'test-key', baseUrl, maxRetries: 0 });

  it("records a round's thought parts and its first call's signature, and gives them back where the next request carries them", async () => {
    gemini = await geminiOnLoopback([ROUND, [{ text: 'Shipped, to Ada.' }], [{ text: 'Done.' }]]);
    const { events, run } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    await createReactAgent({ llm: model(gemini.baseUrl), tools }).invoke(
      { messages: [new HumanMessage('Where is A-1, and who ordered it?')] },
      { callbacks: [handler] },
    );
    await handler.settled();

    const [response] = events.filter((e) => e.type === 'ModelResponseReceived');
    expect(response).toEqual({
      type: 'ModelResponseReceived',
      roundIndex: 0,
      provider: 'google',
      model: MODEL,
      text: "I'll look up the order and the customer.",
      reasoning: [{ text: 'Both lookups at once.', thought: true, thoughtSignature: 'CiQB0e2K-thought' }],
      callSignatures: { call_a: 'CiQB0e2Kb8-first-call' },
    });
    // What the framework itself sent back within the turn: the model's round as Gemini gave it.
    const sentWithinTheTurn = gemini.requests[1].find((c) => c.role === 'model')!;

    // The replayed round, to a new run of the same turn: the same parts reach Gemini, signatures byte for byte.
    const calls = events.filter((e) => e.type === 'ToolCallRequested');
    const round = Round.fromPartial({
      roundIndex: 0,
      provider: 'google',
      model: MODEL,
      text: response.text as string,
      reasoningJson: JSON.stringify(response.reasoning),
      callSignatures: response.callSignatures as Record<string, string>,
      calls: calls.map((c) => ({
        toolCallId: c.toolCallId as string,
        toolName: c.toolName as string,
        argumentsJson: JSON.stringify(c.arguments),
        result: 'done',
      })),
    });
    const replayed = toLangChainMessages({ turns: [{ assistantMessageId: 'answer-1', rounds: [round] }] });
    await model(gemini.baseUrl).invoke([new HumanMessage('Where is A-1, and who ordered it?'), ...replayed]);
    const sentOnReplay = gemini.requests[2].find((c) => c.role === 'model')!;
    expect(sentOnReplay.parts).toEqual(sentWithinTheTurn.parts);
    expect(sentOnReplay.parts.slice(0, 3)).toEqual([
      { text: 'Both lookups at once.', thought: true, thoughtSignature: 'CiQB0e2K-thought' },
      { text: "I'll look up the order and the customer." },
      { functionCall: { name: 'get_order', args: { orderId: 'A-1' } }, thoughtSignature: 'CiQB0e2Kb8-first-call' },
    ]);
    // The unsigned parallel call: @langchain/google-genai gives it a placeholder of its own for a Gemini 3 model.
    expect(sentOnReplay.parts[3]).toMatchObject({ functionCall: { name: 'get_customer', args: { id: 7 } } });
  });

  it("gives a round replayed with Google's placeholder that signature on its first call", async () => {
    gemini = await geminiOnLoopback([[{ text: 'Done.' }]]);
    const round = Round.fromPartial({
      roundIndex: 0,
      provider: 'google',
      model: MODEL,
      reasoningPlaceholder: true,
      calls: [
        { toolCallId: 'call_a', toolName: 'get_order', argumentsJson: '{"orderId":"A-1"}', result: 'shipped' },
        { toolCallId: 'call_b', toolName: 'get_customer', argumentsJson: '{"id":7}', result: 'Ada' },
      ],
    });
    await model(gemini.baseUrl).invoke([
      new HumanMessage('Go on.'),
      ...toLangChainMessages({ turns: [{ assistantMessageId: 'answer-1', rounds: [round] }] }),
    ]);
    const sent = gemini.requests[0].find((c) => c.role === 'model')!;
    expect(sent.parts[0]).toEqual({
      functionCall: { name: 'get_order', args: { orderId: 'A-1' } },
      thoughtSignature: GEMINI_PLACEHOLDER_SIGNATURE,
    });
  });
});
