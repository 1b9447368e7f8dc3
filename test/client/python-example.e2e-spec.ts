import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { toolHistoryClient, ToolHistoryTestClient } from '../support/grpc-client';
import { streamOf } from '../support/read-model-queries';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = 'examples/python-agent/run-example.sh';
const MAX_EVENT_BYTES = 1024 * 1024;

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

/** The OpenAI messages the agent printed for a run: the JSON array after "<run> replayed after ...; the messages to send before ...:". */
function printedMessages(stdout: string, run: string): OpenAiMessage[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`${run} replayed after`)) + 1;
  const end = lines.indexOf(']', start);
  if (start === 0 || end === -1) throw new Error(`no messages of ${run} in the output:\n${stdout}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n'));
}

/** Messages of the stack's topic the recorder has committed (its offsets live in the database, with the events). */
async function consumedMessages(stack: RunningStack): Promise<number> {
  const { rows } = await stack.db.pool.query<{ n: string | null }>('SELECT sum(next_offset) AS n FROM consumer_offsets WHERE topic = $1', [
    stack.topic,
  ]);
  return Number(rows[0].n ?? 0);
}

/** The result agent.py's export_order_history returns, as the JSON text it is cut from. */
const ORDER_HISTORY_JSON = JSON.stringify({
  orderId: 'A-1001',
  scans: Array.from({ length: 20_000 }, (_, n) => ({ scan: n, hub: 'Leipzig', status: 'sorted, on the next truck' })),
});
const TRUNCATION_MARKER = /…\[truncated (\d{1,3}(?:,\d{3})*) chars\]$/;
const APPROVAL_REASON = "refunds over 100 EUR need a person's approval";

/** Events published per pass of the example, and the steps among them (round 0 of run 1 is published twice). */
const PUBLISHED = 18;
const RECORDED = 14;

describe('the Python agent example (examples/python-agent) against the running service', () => {
  let stack: RunningStack;
  let client: ToolHistoryTestClient;
  let first: ScriptResult;
  const tenantId = uniqueName('py-tenant');
  const conversationId = uniqueName('py-conv');
  const runId = uniqueName('py-run');
  const resumedRunId = `${runId}-resumed`;
  const userMessageIds: Record<string, string> = { [runId]: `msg-user-${runId}`, [resumedRunId]: `msg-approval-${runId}` };

  const example = () =>
    runExample({
      KAFKA_BROKERS: stack.brokers.join(','),
      TOOL_EVENTS_TOPIC: stack.topic,
      TOOLHISTORY_ADDRESS: stack.address,
      TENANT_ID: tenantId,
      CONVERSATION_ID: conversationId,
      RUN_ID: runId,
    });

  const recorded = async () => {
    const stream = await streamOf(stack.db.pool, tenantId, conversationId);
    const payloads = stream.map((e) => e.payload);
    const refundCall = payloads.find((p) => p.toolName === 'issue_refund');
    const historyCall = payloads.find((p) => p.toolName === 'export_order_history');
    if (!refundCall || !historyCall)
      throw new Error(`issue_refund or export_order_history not recorded: ${JSON.stringify(stream.map((e) => e.type))}`);
    const ofCall = (call: Record<string, unknown>, type: string) =>
      payloads.find((p) => p.type === type && p.toolCallId === call.toolCallId) ?? { missing: type };
    return { stream, payloads, refundCall, historyCall, ofCall };
  };

  beforeAll(async () => {
    stack = await startRunningStack('pyagent');
    client = toolHistoryClient(Number(stack.address.split(':').pop()));
    first = await example();
    if (first.code !== 0) console.warn(`the example exited ${first.code}:\n${first.stderr.slice(-3000)}`);
  });

  afterAll(async () => {
    client?.close();
    await stack?.stop();
  });

  it('replays run 1 from Python: its 3 answered calls paired with their results, in order', () => {
    // Per round: one assistant message with its calls, then each call's result, in order.
    const messages = printedMessages(first.stdout, 'run 1');
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
    expect(first.stdout).toContain(
      'run 1 replays 3 calls paired with their results, in order: lookup_order#0.0, lookup_customer#0.1, track_parcel#1.0',
    );
    expect(first.stdout).toContain(`recorded once each: ${PUBLISHED} events published, ${RECORDED} recorded`);
  });

  it('records each step once: the approval in the call run, the decision and the result in the run that resumed, every event with its userMessageId', async () => {
    const { stream, refundCall, ofCall } = await recorded();
    // Round 0 of run 1 was published twice with the same event ids: each event is stored once.
    expect(stream.map((e) => [e.payload.runId, e.type])).toEqual([
      [runId, 'ToolCallRequested'],
      [runId, 'ToolCallRequested'],
      [runId, 'ToolResultReceived'],
      [runId, 'ToolResultReceived'],
      [runId, 'ToolCallRequested'],
      [runId, 'ToolResultReceived'],
      [runId, 'ToolCallRequested'],
      [runId, 'ToolApprovalRequested'],
      [runId, 'RunCompleted'],
      [resumedRunId, 'ToolApprovalDecided'],
      [resumedRunId, 'ToolResultReceived'],
      [resumedRunId, 'ToolCallRequested'],
      [resumedRunId, 'ToolResultReceived'],
      [resumedRunId, 'RunCompleted'],
    ]);
    expect(stream.map((e) => [e.payload.runId, e.payload.userMessageId])).toEqual(
      stream.map((e) => [e.payload.runId, userMessageIds[String(e.payload.runId)]]),
    );

    const callIds = { toolCallId: refundCall.toolCallId, roundIndex: 2, sequenceIndex: 0 };
    expect(refundCall).toMatchObject({ runId, ...callIds, arguments: { orderId: 'A-1001', amountEur: 129.9 } });
    expect(refundCall.toolCallId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(ofCall(refundCall, 'ToolApprovalRequested')).toMatchObject({ runId, ...callIds, reason: APPROVAL_REASON });
    expect(ofCall(refundCall, 'ToolApprovalDecided')).toMatchObject({
      runId: resumedRunId,
      ...callIds,
      approved: true,
      reason: 'the parcel was lost in transit',
      decidedBy: 'support-lead',
    });
    expect(ofCall(refundCall, 'ToolResultReceived')).toMatchObject({
      runId: resumedRunId,
      ...callIds,
      result: { refundId: 'R-501', status: 'refunded' },
      isError: false,
    });
    const completions = stream.filter((e) => e.type === 'RunCompleted').map((e) => e.payload);
    expect(completions.map((p) => [p.runId, p.finishReason, (p.usage as unknown[]).length])).toEqual([
      [runId, 'awaiting_approval', 3],
      [resumedRunId, 'stop', 2],
    ]);
  });

  it('records the result cut to fit the event limit, with the marker and its size before the cut', async () => {
    const { historyCall, ofCall } = await recorded();
    const cut = ofCall(historyCall, 'ToolResultReceived') as Record<string, unknown>;
    expect(cut).toMatchObject({ runId: resumedRunId, roundIndex: 0, sequenceIndex: 0, isError: false });
    expect(Buffer.byteLength(ORDER_HISTORY_JSON)).toBeGreaterThan(MAX_EVENT_BYTES);
    expect(cut.originalBytes).toBe(Buffer.byteLength(ORDER_HISTORY_JSON));
    const text = String(cut.result);
    const marker = TRUNCATION_MARKER.exec(text);
    expect(marker).not.toBeNull();
    const kept = text.slice(0, marker!.index);
    // The JSON text's start, and the marker counts the rest; the event as published filled the limit.
    expect(ORDER_HISTORY_JSON.startsWith(kept)).toBe(true);
    expect(kept.length + Number(marker![1].replace(/,/g, ''))).toBe(ORDER_HISTORY_JSON.length);
    const { redaction: _recordedNote, ...published } = cut;
    const bytes = Buffer.byteLength(JSON.stringify(published));
    expect(bytes).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    expect(bytes).toBeGreaterThan(MAX_EVENT_BYTES - 64);
  });

  it('lists every call for audit: the refund in run 1 with its arguments, the cut result in run 2', async () => {
    const { refundCall, historyCall, ofCall } = await recorded();
    const { invocations, next_page_token } = await client.listToolInvocations({ tenant_id: tenantId, conversation_id: conversationId });
    expect(next_page_token).toBe('');
    const calls = invocations.filter((i) => i.tool_name !== '');
    expect(calls.map((i) => [i.run_id, i.round_index, i.sequence_index, i.tool_name])).toEqual([
      [runId, 0, 0, 'lookup_order'],
      [runId, 0, 1, 'lookup_customer'],
      [runId, 1, 0, 'track_parcel'],
      [runId, 2, 0, 'issue_refund'],
      [resumedRunId, 0, 0, 'export_order_history'],
    ]);
    const [refund, history] = [calls[3], calls[4]];
    expect(refund.tool_call_id).toBe(refundCall.toolCallId);
    expect(JSON.parse(refund.arguments_json)).toEqual({ orderId: 'A-1001', amountEur: 129.9 });
    expect(history).toMatchObject({
      tool_call_id: historyCall.toolCallId,
      status: 'INVOCATION_STATUS_SUCCEEDED',
      is_error: false,
      result: ofCall(historyCall, 'ToolResultReceived').result,
    });
    expect(history.result).toMatch(TRUNCATION_MARKER);
    expect(Number(history.duration_ms)).toBeGreaterThanOrEqual(0); // the result was published after its call
  });

  it('lists the refund as approved and answered in the run that resumed, and the cut result with its size before the cut', async () => {
    const { historyCall, ofCall } = await recorded();
    const { invocations } = await client.listToolInvocations({ tenant_id: tenantId, conversation_id: conversationId });
    // The result recorded in run 2 pairs with run 1's call: no invocation of its own.
    expect(invocations.map((i) => [i.run_id, i.tool_name, i.approval])).toEqual([
      [runId, 'lookup_order', 'APPROVAL_STATUS_NONE'],
      [runId, 'lookup_customer', 'APPROVAL_STATUS_NONE'],
      [runId, 'track_parcel', 'APPROVAL_STATUS_NONE'],
      [runId, 'issue_refund', 'APPROVAL_STATUS_APPROVED'],
      [resumedRunId, 'export_order_history', 'APPROVAL_STATUS_NONE'],
    ]);
    const refund = invocations[3];
    expect(refund).toMatchObject({
      status: 'INVOCATION_STATUS_SUCCEEDED',
      result_run_id: resumedRunId,
      approval_decided_by: 'support-lead',
      approval_request_reason: APPROVAL_REASON,
      approval_decision_reason: 'the parcel was lost in transit',
    });
    expect(JSON.parse(refund.result)).toEqual({ refundId: 'R-501', status: 'refunded' });
    expect(refund.approval_decided_at).not.toBeNull();
    expect(invocations[4].result_original_bytes).toBe(String(ofCall(historyCall, 'ToolResultReceived').originalBytes));
  });

  it('replays the approval: pending between the runs, then resumed first in the turn of the run that resumed', async () => {
    const { refundCall } = await recorded();
    // Between the runs, as the example printed it: the refund left out of run 1 and listed as pending.
    const lines = first.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('pending approvals after run 1:'));
    expect([lines[at], lines.find((line) => line.startsWith('left out of run 1:'))]).toEqual([
      'pending approvals after run 1: 1',
      'left out of run 1: issue_refund#2.0 (OMISSION_REASON_AWAITING_APPROVAL)',
    ]);
    const pending = /^ {2}- (\S+) (\S+) of run (\S+) \(round (\d+), call (\d+)\), arguments (\{.*\}): (.*)$/.exec(lines[at + 1]);
    expect(pending && [...pending.slice(1, 4), Number(pending[4]), Number(pending[5]), JSON.parse(pending[6]), pending[7]]).toEqual([
      'issue_refund',
      refundCall.toolCallId,
      runId,
      2,
      0,
      { orderId: 'A-1001', amountEur: 129.9 },
      APPROVAL_REASON,
    ]);
    // Now: nothing pending; run 2's turn starts with the refund's round, resumed from run 1.
    const replay = await client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId });
    expect(replay.pending_approvals).toEqual([]);
    expect(
      replay.turns.map((t) => ({
        run: t.run_id,
        after: t.after_message_id,
        rounds: t.rounds.map((r) => [r.round_index, r.resumed_from_run_id, r.calls.map((c) => `${c.tool_name}:${c.approval}`)]),
      })),
    ).toEqual([
      {
        run: runId,
        after: userMessageIds[runId],
        rounds: [
          [0, '', ['lookup_order:APPROVAL_STATUS_NONE', 'lookup_customer:APPROVAL_STATUS_NONE']],
          [1, '', ['track_parcel:APPROVAL_STATUS_NONE']],
        ],
      },
      {
        run: resumedRunId,
        after: userMessageIds[resumedRunId],
        rounds: [
          [2, runId, ['issue_refund:APPROVAL_STATUS_APPROVED']],
          [0, '', ['export_order_history:APPROVAL_STATUS_NONE']],
        ],
      },
    ]);
    const resumed = replay.turns[1].rounds[0].calls[0];
    expect(resumed).toMatchObject({ tool_call_id: refundCall.toolCallId, is_error: false, interrupted: false });
    expect(JSON.parse(resumed.result)).toEqual({ refundId: 'R-501', status: 'refunded' });
  });

  it("passes the example's own checks", () => {
    expect({ code: first.code, stderr: first.code === 0 ? '' : first.stderr.slice(-3000) }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toContain(
      `OK: run ${runId} replays 3 calls paired with their results and waits for approval of issue_refund#2.0; ` +
        `run ${resumedRunId} resumes it, approved, then replays export_order_history#0.0 cut to fit`,
    );
  });

  it('publishing the same runs again records nothing new', async () => {
    const before = await streamOf(stack.db.pool, tenantId, conversationId);
    const { code, stdout, stderr } = await example();
    expect(stdout).toContain(`recorded once each: ${PUBLISHED} events published, ${RECORDED} recorded`);
    // The replay was already there, so the agent did not wait for its second pass to be consumed: wait until
    // the recorder has committed past all the messages of the topic (PUBLISHED per pass), then compare.
    await waitFor(
      () => consumedMessages(stack),
      (n) => n === 2 * PUBLISHED,
      { what: 'the recorder to commit past the second pass', timeoutMs: 60_000 },
    );
    const after = await streamOf(stack.db.pool, tenantId, conversationId);
    expect(after.map((e) => e.event_id)).toEqual(before.map((e) => e.event_id));
    expect({ code, stderr: code === 0 ? '' : stderr.slice(-3000) }).toEqual({ code: 0, stderr: '' });
  });
});
