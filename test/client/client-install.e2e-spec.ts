import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { installPackedClient } from '../support/packed-client';

const ROOT = resolve(__dirname, '../..');
const CLIENT_PACKAGE = JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
};

/** The lowest version a peer range of the client takes (`>=6.0.326 <8`: 6.0.326). */
function lowestPeer(name: string): string {
  const lowest = /^>=(\S+)/.exec(CLIENT_PACKAGE.peerDependencies[name])?.[1];
  if (lowest === undefined) throw new Error(`the peer range of ${name} names no lowest version: ${CLIENT_PACKAGE.peerDependencies[name]}`);
  return `${name}@${lowest}`;
}

/**
 * A worker's code as its author would write it against the installed
 * packages, type-checked: the replay in every format typed as the API's own
 * input (OpenAI Responses items are the openai package's ResponseInputItem,
 * no cast), and the AI SDK adapter typed by the installed SDK's own types
 * (typed tool results, structured output).
 */
const TYPED_WORKER = `
import { ToolEventPublisher, ToolHistoryClient, spliceHistory, type HistoryMessages } from '@toolhistory/client';
import { recordedGenerateText, recordedStreamText, toolHistoryCallbacks } from '@toolhistory/client/ai-sdk';
import { recordOpenAiToolLoop } from '@toolhistory/client/openai';
import { generateText, Output, stepCountIs, tool, type LanguageModel, type ModelMessage } from 'ai';
import type OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { z } from 'zod';

const client = new ToolHistoryClient({ address: '127.0.0.1:50051' });
const publisher = new ToolEventPublisher({ brokers: ['127.0.0.1:9092'] });
const scope = { tenantId: 'acme', conversationId: 'conv-1', channel: 'web', runId: 'run-1' };

export async function responses(openai: OpenAI): Promise<string> {
  const history = await client.getReplayHistory({ tenantId: 'acme', conversationId: 'conv-1', format: 'openai-responses' });
  const replayed: ResponseInputItem[] = history.messages;
  const response = await openai.responses.create({ model: 'gpt-5', input: [...replayed, { role: 'user', content: 'And now?' }] });
  return response.output_text;
}

export async function otherApis(): Promise<Array<HistoryMessages['gemini'] | HistoryMessages['bedrock-converse']>> {
  const gemini = await client.getReplayHistory({ tenantId: 'acme', conversationId: 'conv-1', format: 'gemini' });
  // @ts-expect-error Gemini contents are no OpenAI Responses input items (types that degraded to any would let this pass).
  const notResponses: ResponseInputItem[] = gemini.messages;
  const bedrock = await client.getReplayHistory({ tenantId: 'acme', conversationId: 'conv-1', format: 'bedrock-converse' });
  return [...gemini.messages, ...bedrock.messages, ...notResponses.slice(0, 0) as never[]];
}

const tools = {
  get_order: tool({
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ orderId, status: 'shipped' as const }),
  }),
};

export async function aiSdk(model: LanguageModel, stored: Array<ModelMessage & { id?: string }>): Promise<string> {
  const history = await client.getReplayHistory({ tenantId: 'acme', conversationId: 'conv-1', format: 'ai-sdk' });
  const messages: ModelMessage[] = [...spliceHistory(stored, history.turns, (m) => m.id), { role: 'user', content: 'Where is A-1?' }];
  const result = await recordedGenerateText(publisher.run(scope), { model, tools, messages, stopWhen: stepCountIs(5) });
  for (const toolResult of result.toolResults) {
    if (toolResult.toolName === 'get_order' && !toolResult.dynamic) {
      const status: 'shipped' = toolResult.output.status;
      void status;
    }
  }
  const structured = await recordedGenerateText(publisher.run(scope), {
    model,
    prompt: 'Count them',
    output: Output.object({ schema: z.object({ count: z.number() }) }),
  });
  const count: number = structured.output.count;
  // @ts-expect-error the count is a number
  const notText: string = structured.output.count;
  const streamed = recordedStreamText(publisher.run(scope), { model, tools, messages });
  await streamed.recorded;
  const callbacks = toolHistoryCallbacks<typeof tools>(publisher.run(scope));
  const direct = await generateText({ model, tools, messages, onStepFinish: callbacks.onStepFinish, stopWhen: [stepCountIs(5), callbacks.recordingFailed] });
  await callbacks.complete(direct);
  return [result.text, count, notText, await streamed.text].join(' ');
}

export const openAiRecorder = recordOpenAiToolLoop(publisher.run(scope));
`;

/** The same from CommonJS: AI SDK 7 ships ES modules only, which TypeScript lets CommonJS require under module nodenext. */
const TYPED_CJS_WORKER = `
import { recordedGenerateText } from '@toolhistory/client/ai-sdk';
import { stepCountIs, type LanguageModel } from 'ai';
import { ToolEventPublisher } from '@toolhistory/client';

export async function answer(model: LanguageModel): Promise<string> {
  const run = new ToolEventPublisher({ brokers: ['127.0.0.1:9092'] }).run({ tenantId: 't', conversationId: 'c', channel: 'web', runId: 'r' });
  return (await recordedGenerateText(run, { model, prompt: 'hi', stopWhen: stepCountIs(2) })).text;
}
`;

/**
 * The AI SDK adapter at run time, from the packed build, against the
 * installed SDK: one step of a tool call, then an answer, recorded by a
 * RunPublisher whose events are prepared as the publisher sends them. The
 * caller's onStepEnd (AI SDK 7's name) must not displace the recording.
 */
function runningWorker(imports: string): string {
  return `${imports}
const scope = { tenantId: 't', conversationId: 'c', channel: 'web', runId: 'r' };
const events = [];
const run = new RunPublisher(scope, async (batch) =>
  prepareEvents(scope, batch, { maxEventBytes: 1048576 }).map(({ eventId, type, value }) => {
    events.push(JSON.parse(value));
    return { eventId, type, partition: 0, offset: String(events.length - 1) };
  }),
);
const usage = { inputTokens: { total: 3, noCache: 3 }, outputTokens: { total: 1, text: 1 } };
const model = new MockLanguageModelV3({
  doGenerate: [
    { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'get_order', input: '{"orderId":"A-1"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
    { content: [{ type: 'text', text: 'Shipped.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
  ],
});
const tools = { get_order: tool({ inputSchema: z.object({ orderId: z.string() }), execute: async ({ orderId }) => orderId + ' shipped' }) };
let stepEnds = 0;
recordedGenerateText(run, { model, tools, prompt: 'Where is A-1?', stopWhen: stepCountIs(3), onStepEnd: () => void stepEnds++ }).then(
  (result) => console.log(JSON.stringify({ text: result.text, events: events.map((e) => [e.type, e.toolCallId ?? null, e.result ?? null]) })),
  (error) => { console.error(error); process.exitCode = 1; },
);
`;
}

const ESM_IMPORTS = `import { RunPublisher, prepareEvents } from '@toolhistory/client';
import { recordedGenerateText } from '@toolhistory/client/ai-sdk';
import { stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';`;
const CJS_IMPORTS = `const { RunPublisher, prepareEvents } = require('@toolhistory/client');
const { recordedGenerateText } = require('@toolhistory/client/ai-sdk');
const { stepCountIs, tool } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { z } = require('zod');`;

/** tsc's errors as `file(line,col): error TSxxxx: ...`, each with the lines that explain it. */
function typeErrors(output: string): string[] {
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    if (/^\S.*\(\d+,\d+\): error TS\d+/.test(line)) errors.push(line);
    else if (line.trim() !== '' && errors.length > 0) errors[errors.length - 1] += `\n${line}`;
  }
  return errors;
}

describe.each([
  ['the latest ai and openai, and @openai/agents (which wants openai 7)', ['ai@latest', 'openai@latest', '@openai/agents']],
  ['the lowest ai and openai its peer ranges take', [lowestPeer('ai'), lowestPeer('openai')]],
])('the packed @toolhistory/client installed with %s into an empty Node.js 24 project', (_versions, packages) => {
  let project: string;

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'toolhistory-client-install-'));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'a-worker', version: '1.0.0', private: true, type: 'module', engines: { node: '>=24' } }),
    );
    // From the npm registry (some 5 to 10 s with a warm cache); a peer range that does not take them fails here (ERESOLVE),
    // as does a package whose engines refuse this Node.js.
    installPackedClient(project, packages, ['--engine-strict']);
  }, 300_000);

  it('gives TypeScript (strict, module nodenext) types that fit the installed SDKs, from ES modules and CommonJS', () => {
    writeFileSync(join(project, 'worker.mts'), TYPED_WORKER);
    writeFileSync(join(project, 'worker.cts'), TYPED_CJS_WORKER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2024',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          // The AI SDK's and the Agents SDK's declarations name browser types (HeadersInit, MediaStream).
          lib: ['es2024', 'dom'],
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['worker.mts', 'worker.cts'],
      }),
    );
    let output = '';
    try {
      execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    // Every declaration is checked (no skipLibCheck); what other packages' own declarations lack (@ai-sdk/provider's
    // json-schema types) is theirs to fix: the workers and the client's declarations must be free of errors.
    const ours = typeErrors(output).filter((error) => !error.startsWith('node_modules/') || error.startsWith('node_modules/@toolhistory/'));
    expect(ours).toEqual([]);
  }, 180_000);

  it.each([
    ['an ES module', 'worker.mjs', ESM_IMPORTS],
    ['CommonJS (require)', 'worker.cjs', CJS_IMPORTS],
  ])(
    'records an AI SDK call from %s at run time',
    (_kind, file, imports) => {
      writeFileSync(join(project, file), runningWorker(imports));
      const printed = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
      expect(JSON.parse(printed)).toEqual({
        text: 'Shipped.',
        events: [
          ['ToolCallRequested', 'call_1', null],
          ['ToolResultReceived', 'call_1', 'A-1 shipped'],
          ['RunCompleted', null, null],
        ],
      });
    },
    60_000,
  );
});
