// An AI SDK agent whose tool calls toolhistory records and replays: three
// turns of one conversation, each recorded by the @toolhistory/client/ai-sdk
// adapter, each starting from the history the service replays. The model is
// scripted (the AI SDK's own test model), so no API key is needed; swap in a
// real one (e.g. openai('gpt-4.1')) and nothing else changes.
//
// Settings (environment):
//   KAFKA_BROKERS          127.0.0.1:9092 (comma-separated host:port)
//   TOOL_EVENTS_TOPIC      agent.tool-events
//   TOOLHISTORY_ADDRESS    127.0.0.1:50051 (host:port of the gRPC API, plaintext)
//   TOOLHISTORY_TOKEN      optional bearer token
//
// Exits 0 only if the history replayed at the last turn holds the tool calls
// of the earlier turns; otherwise it says what is missing and exits 1.
import { randomUUID } from 'node:crypto';
import { spliceHistory, ToolEventPublisher, ToolHistoryClient } from '@toolhistory/client';
import { recordedGenerateText } from '@toolhistory/client/ai-sdk';
import { stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const env = process.env;
const publisher = new ToolEventPublisher({
  brokers: (env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  topic: env.TOOL_EVENTS_TOPIC ?? 'agent.tool-events',
});
const client = new ToolHistoryClient({ address: env.TOOLHISTORY_ADDRESS ?? '127.0.0.1:50051', token: env.TOOLHISTORY_TOKEN || undefined });
const tenantId = 'example';
const conversationId = `example-${randomUUID()}`;

const WEATHER = { Paris: { tempC: 18, sky: 'rain' }, Berlin: { tempC: 12, sky: 'rain' } };
const tools = {
  get_weather: tool({
    description: 'Current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, ...(WEATHER[city] ?? { tempC: 15, sky: 'clouds' }) }),
  }),
  suggest_packing: tool({
    description: 'What to pack for these temperatures',
    inputSchema: z.object({ tempsC: z.array(z.number()) }),
    execute: async ({ tempsC }) => (Math.min(...tempsC) < 15 ? 'a warm coat and an umbrella' : 'a light jacket and an umbrella'),
  }),
};

// --- The model: what a real one would answer, one model call after another. ---
const usage = { inputTokens: { total: 50, noCache: 50 }, outputTokens: { total: 10, text: 10 } };
const toolCalls = (...calls) => ({
  content: calls.map(([toolCallId, toolName, input]) => ({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const answer = (text) => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });
/** Turn 3 asks for no tool: the model answers from the replayed get_weather result, if it was sent one. */
const answerFromHistory = ({ prompt }) => {
  const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  const paris = results.map((r) => r.output?.value).find((value) => typeof value === 'string' && value.includes('"Paris"'));
  return answer(paris ? `Paris was ${JSON.parse(paris).tempC}°C, as I looked up earlier.` : 'I do not know any more.');
};
const script = [
  toolCalls(['call_w_paris', 'get_weather', { city: 'Paris' }], ['call_w_berlin', 'get_weather', { city: 'Berlin' }]),
  answer('Paris: 18°C, Berlin: 12°C, rain in both.'),
  toolCalls(['call_pack', 'suggest_packing', { tempsC: [18, 12] }]),
  answer('Pack a warm coat and an umbrella.'),
  answerFromHistory,
];
const model = new MockLanguageModelV3({
  modelId: 'scripted-model',
  doGenerate: async (options) => {
    const next = script.shift();
    if (next === undefined) throw new Error('the script has no answer left');
    return typeof next === 'function' ? next(options) : next;
  },
});

// --- The agent. ---
const questions = ['What is the weather in Paris and Berlin?', 'What should I pack for both?', 'Remind me: how warm was Paris?'];
const chat = []; // the host's own chat log: { id, message }
const recordedCalls = []; // the tool calls of each turn, as the model made them
let history;

async function main() {
  await publisher.connect();
  for (const [index, question] of questions.entries()) {
    const runId = `${conversationId}-turn-${index + 1}`;
    const answerId = `${runId}-answer`;
    // Turn start: the history the model may see again; each turn's tool segment goes before that turn's answer.
    // The client sends the last consistency token this process published for the conversation, so the service
    // answers once the earlier turns are recorded (read-your-writes): no waiting loop here.
    history = await client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' });
    console.log(`turn ${index + 1}: replayed ${describe(history)}`);
    const user = { role: 'user', content: question };
    const messages = [...spliceHistory(chat, history.turns, (entry) => entry.id).map((entry) => entry.message ?? entry), user];
    // The turn, recorded: each round acknowledged before the next model call, then the run's end.
    const run = publisher.run({ tenantId, conversationId, channel: 'web', runId });
    const result = await recordedGenerateText(run, { model, tools, messages, stopWhen: stepCountIs(5) }, { assistantMessageId: answerId });
    console.log(`  user: ${question}\n  assistant: ${result.text}`);
    // A host whose next turn runs in another process would keep run.consistencyToken with the answer and pass it there.
    if (!run.consistencyToken) throw new Error('the run published nothing');
    chat.push({ id: `${runId}-question`, message: user }, { id: answerId, message: { role: 'assistant', content: result.text } });
    for (const step of result.steps) recordedCalls.push(...step.toolCalls.map((call) => ({ answerId, id: call.toolCallId })));
  }
  // The last turn started from the history of the earlier ones: every tool call they made must be in it.
  const replayed = new Set(history.turns.flatMap((turn) => turn.rounds.flatMap((round) => round.calls.map((call) => call.toolCallId))));
  const missing = recordedCalls.filter((call) => !replayed.has(call.id)).map((call) => call.id);
  if (recordedCalls.length === 0 || missing.length > 0)
    throw new Error(`the last turn's history lacks tool calls of earlier turns: ${missing.join(', ') || '(none made)'}`);
  console.log(`ok: the last turn replayed all ${recordedCalls.length} tool calls of the earlier turns`);
}

function describe({ turns, omitted }) {
  if (turns.length === 0) return 'nothing';
  const calls = turns.flatMap((turn) =>
    turn.rounds.flatMap((round) => round.calls.map((call) => `${call.toolName}(${call.argumentsJson}) -> ${call.result}`)),
  );
  return `${turns.length} earlier turn(s), ${omitted.length} call(s) left out:\n    ${calls.join('\n    ')}`;
}

try {
  await main();
} catch (error) {
  console.error(`agent.mjs: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  client.close();
  await publisher.disconnect();
}
