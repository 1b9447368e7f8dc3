import { type SubscribedEvent, ToolEventPublisher, ToolHistoryClient, ToolHistoryError } from '../../libs/client/src';
import { startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

describe('a client subscription across a restart of the service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;

  const calls = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      roundIndex: 0,
      sequenceIndex: i,
      toolCallId: `call_${i}`,
      toolName: 'get_order',
      arguments: { i },
    }));
  const results = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ roundIndex: 0, sequenceIndex: i, toolCallId: `call_${i}`, result: `r${i}` }));

  /** Consumes in the background, so the test can restart the service meanwhile. */
  function consume(request: Parameters<ToolHistoryClient['subscribe']>[0], until: number) {
    const received: SubscribedEvent[] = [];
    const done = (async () => {
      for await (const recorded of client.subscribe(request)) {
        received.push(recorded);
        if (received.length === until) return;
      }
    })();
    done.catch(() => undefined);
    return { received, done };
  }

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('reconnect'));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  it('ends with UNAVAILABLE, after every event already sent, when the service shuts down and reconnect is off', async () => {
    const tenantId = uniqueName('tenant');
    await publisher.run({ tenantId, conversationId: 'c', channel: 'web', runId: 'r' }).toolCalls(calls(2));
    const { received, done } = consume({ tenantId }, 3);
    await waitFor(
      async () => received.length,
      (n) => n === 2,
      { what: 'the two recorded events' },
    );
    await stack.restart();
    await expect(done).rejects.toBeInstanceOf(ToolHistoryError);
    await expect(done).rejects.toMatchObject({ status: 'UNAVAILABLE', retriable: true });
    expect(received).toHaveLength(2);
  });

  it('with reconnect, resumes after the last position delivered: every event once, in order', async () => {
    const tenantId = uniqueName('tenant');
    const run = publisher.run({ tenantId, conversationId: 'c', channel: 'web', runId: 'r' });
    await run.toolCalls(calls(3));
    const controller = new AbortController();
    const { received, done } = consume({ tenantId, reconnect: true, signal: controller.signal }, 7);
    await waitFor(
      async () => received.length,
      (n) => n === 3,
      { what: 'the first three events' },
    );
    await stack.restart();
    await run.toolResults(results(3));
    await run.complete({ assistantMessageId: 'm' });
    await waitFor(
      async () => received.length,
      (n) => n === 7,
      { what: 'all seven events across the restart', timeoutMs: 60_000 },
    );
    await done;
    expect(received.map((e) => e.type)).toEqual([
      ...Array(3).fill('ToolCallRequested'),
      ...Array(3).fill('ToolResultReceived'),
      'RunCompleted',
    ]);
    expect(new Set(received.map((e) => e.eventId)).size).toBe(7);
    const positions = received.map((e) => BigInt(e.position));
    expect(positions.every((p, i) => i === 0 || p > positions[i - 1])).toBe(true);
  });

  it('with reconnect, keeps trying while the service is away, and stops when the signal aborts', async () => {
    const tenantId = uniqueName('tenant');
    const controller = new AbortController();
    let opens = 0;
    // The token is fetched once per attempt to open the stream: the third attempt aborts.
    const away = new ToolHistoryClient({
      address: '127.0.0.1:1',
      token: () => {
        if (++opens === 3) controller.abort();
        return 't';
      },
    });
    try {
      const iteration = (async () => {
        for await (const recorded of away.subscribe({ tenantId, reconnect: true, signal: controller.signal })) return recorded;
        return 'ended';
      })();
      await expect(iteration).resolves.toBe('ended');
      expect(opens).toBe(3);
    } finally {
      away.close();
    }
  });
});
