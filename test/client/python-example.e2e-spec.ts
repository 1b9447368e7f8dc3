import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { streamOf } from '../support/read-model-queries';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = 'examples/python-agent/run-example.sh';

interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the example as CI does (`bash examples/python-agent/run-example.sh`), without blocking the event loop. */
function runExample(env: Record<string, string>): Promise<ScriptResult> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [SCRIPT], {
      cwd: ROOT,
      // Only what the example needs: no TOOLHISTORY_TOKEN or other setting leaks in from the test's environment.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The OpenAI chat messages of a replayed turn: an assistant message with its tool calls, then one tool message per call. */
type OpenAiMessage =
  | { role: 'assistant'; content: null; tool_calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The OpenAI messages the agent printed: the JSON array after "the messages to send before ...:". */
function printedMessages(stdout: string): OpenAiMessage[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => line.includes('the messages to send before')) + 1;
  const end = lines.indexOf(']', start);
  if (start === 0 || end === -1) throw new Error(`no messages in the output:\n${stdout}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n'));
}

/** Messages of the stack's topic the recorder has committed (its offsets live in the database, with the events). */
async function consumedMessages(stack: RunningStack): Promise<number> {
  const { rows } = await stack.db.pool.query<{ n: string | null }>('SELECT sum(next_offset) AS n FROM consumer_offsets WHERE topic = $1', [
    stack.topic,
  ]);
  return Number(rows[0].n ?? 0);
}

describe('the Python agent example (examples/python-agent) against the running service', () => {
  let stack: RunningStack;
  const tenantId = uniqueName('py-tenant');
  const conversationId = uniqueName('py-conv');
  const runId = uniqueName('py-run');

  beforeAll(async () => {
    stack = await startRunningStack('pyagent');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const example = () =>
    runExample({
      KAFKA_BROKERS: stack.brokers.join(','),
      TOOL_EVENTS_TOPIC: stack.topic,
      TOOLHISTORY_ADDRESS: stack.address,
      TENANT_ID: tenantId,
      CONVERSATION_ID: conversationId,
      RUN_ID: runId,
    });

  it('publishes a run from Python and replays its 3 calls paired with their results, in order', async () => {
    const { code, stdout, stderr } = await example();
    expect({ code, stderr: code === 0 ? '' : stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });

    // Per round: one assistant message with its calls, then each call's result, in order.
    const messages = printedMessages(stdout);
    const calls = messages.flatMap((m) => (m.role === 'assistant' ? m.tool_calls : []));
    const shape = messages.map((m) =>
      m.role === 'assistant'
        ? { role: 'assistant', calls: m.tool_calls.map((c) => c.function.name) }
        : { role: 'tool', id: m.tool_call_id, content: m.content },
    );
    expect(shape).toEqual([
      { role: 'assistant', calls: ['lookup_order', 'lookup_customer'] },
      { role: 'tool', id: calls[0].id, content: expect.any(String) },
      { role: 'tool', id: calls[1].id, content: expect.any(String) },
      { role: 'assistant', calls: ['track_parcel'] },
      { role: 'tool', id: calls[2].id, content: 'in transit, arriving tomorrow' },
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(3);
    expect(calls.map((c) => JSON.parse(c.function.arguments))).toEqual([{ orderId: 'A-1001' }, { customerId: 'C-7' }, { parcel: 'P-77' }]);
    const results = messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    expect(JSON.parse(results[0])).toEqual({ status: 'shipped', carrier: 'DHL', parcel: 'P-77' });
    expect(JSON.parse(results[1])).toEqual({ name: 'Ada', tier: 'gold' });
    expect(stdout).toContain('recorded once each: 11 events published, 7 recorded');
    expect(stdout).toContain(
      `OK: run ${runId} replays 3 calls paired with their results, in order: lookup_order#0.0, lookup_customer#0.1, track_parcel#1.0`,
    );

    // Round 0 was published twice with the same event ids: each event is stored once.
    const stream = await streamOf(stack.db.pool, tenantId, conversationId);
    expect(stream.map((e) => e.type)).toEqual([
      'ToolCallRequested',
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'RunCompleted',
    ]);
  });

  it('publishing the same run again records nothing new', async () => {
    const before = await streamOf(stack.db.pool, tenantId, conversationId);
    const { code, stdout, stderr } = await example();
    expect({ code, stderr: code === 0 ? '' : stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('recorded once each: 11 events published, 7 recorded');
    // The replay was already there, so the agent did not wait for its second run to be consumed: wait
    // until the recorder has committed past all 22 messages of the topic (11 per run), then compare.
    await waitFor(
      () => consumedMessages(stack),
      (n) => n === 22,
      { what: 'the recorder to commit past the second run', timeoutMs: 60_000 },
    );
    const after = await streamOf(stack.db.pool, tenantId, conversationId);
    expect(after.map((e) => e.event_id)).toEqual(before.map((e) => e.event_id));
  });
});
