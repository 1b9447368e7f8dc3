import { Metadata, type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { GetReplayHistoryResponse } from './generated/toolhistory/v1/toolhistory';
import { jitteredPushbackMs, pushbackOf, retryDelayMs } from './pushback';
import { ToolHistoryClient } from './tool-history-client';
import { ToolHistoryError } from './tool-history-errors';

const trailers = (value?: string) => {
  const metadata = new Metadata();
  if (value !== undefined) metadata.set('grpc-retry-pushback-ms', value);
  return metadata;
};

describe('pushback', () => {
  it('reads the pushback trailer, and only a whole number of milliseconds', () => {
    expect(pushbackOf(trailers('250'))).toBe(250);
    expect(pushbackOf(trailers('0'))).toBe(0);
    expect(pushbackOf(trailers())).toBeUndefined();
    expect(pushbackOf(trailers('-1'))).toBeUndefined();
    expect(pushbackOf(trailers('soon'))).toBeUndefined();
    expect(pushbackOf(undefined)).toBeUndefined();
  });

  it('waits never less than the pushback, and at most half as long again', () => {
    expect(jitteredPushbackMs(200, () => 0)).toBe(200);
    expect(jitteredPushbackMs(200, () => 0.999)).toBe(300);
    const waits = Array.from({ length: 1_000 }, () => jitteredPushbackMs(100));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...waits)).toBeLessThanOrEqual(150);
    // Spread out, so refused callers do not come back together.
    expect(new Set(waits).size).toBeGreaterThan(20);
  });

  it('retries only a busy refusal that says when, within the attempts and the deadline', () => {
    const busy = { code: GrpcStatus.RESOURCE_EXHAUSTED, pushbackMs: 100 };
    const half = () => 0.5;
    expect(retryDelayMs(busy, 1, 3, 1_000, half)).toBe(125);
    expect(retryDelayMs(busy, 3, 3, 1_000, half)).toBeUndefined();
    // A wait that would leave no time for the next attempt: fail now, the caller goes on without.
    expect(retryDelayMs(busy, 1, 3, 130, half)).toBeUndefined();
    // Without a pushback (the tenant's stream limit, say), and for any other status: no retry here.
    expect(retryDelayMs({ code: GrpcStatus.RESOURCE_EXHAUSTED }, 1, 3, 1_000)).toBeUndefined();
    expect(retryDelayMs({ code: GrpcStatus.UNAVAILABLE, pushbackMs: 100 }, 1, 3, 1_000)).toBeUndefined();
  });
});

type ReplayCallback = (error: ServiceError | null, response?: GetReplayHistoryResponse) => void;

/** A client whose GetReplayHistory is answered here, with no network: `answers` in turn, timed. */
function clientAnswering(answers: Array<'ok' | { pushback?: string }>, options: { maxAttempts?: number } = {}) {
  const client = new ToolHistoryClient({ address: '127.0.0.1:1', retry: options });
  const calls: number[] = [];
  const stub = (client as unknown as { stub: { getReplayHistory: unknown } }).stub;
  stub.getReplayHistory = (_request: unknown, _metadata: Metadata, _options: unknown, callback: ReplayCallback) => {
    const answer = answers[calls.length] ?? 'ok';
    calls.push(Date.now());
    setImmediate(() =>
      answer === 'ok'
        ? callback(null, GetReplayHistoryResponse.fromPartial({}))
        : callback(
            Object.assign(new Error('busy'), {
              code: GrpcStatus.RESOURCE_EXHAUSTED,
              details: 'server busy (replay reads)',
              metadata: trailers(answer.pushback),
            }) as ServiceError,
          ),
    );
    return { cancel: () => undefined };
  };
  return { client, calls };
}

describe('ToolHistoryClient honours the pushback of a busy refusal', () => {
  const replay = (client: ToolHistoryClient, control: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    client.getReplayHistory({ tenantId: 't', conversationId: 'c', format: 'openai', ...control });

  it('tries again after the pushback, and answers', async () => {
    const { client, calls } = clientAnswering([{ pushback: '40' }, { pushback: '40' }, 'ok']);
    try {
      await expect(replay(client)).resolves.toMatchObject({ turns: [] });
      expect(calls).toHaveLength(3);
      // Never sooner than asked (timers may fire a millisecond early).
      expect(calls[1] - calls[0]).toBeGreaterThanOrEqual(39);
      expect(calls[2] - calls[1]).toBeGreaterThanOrEqual(39);
    } finally {
      client.close();
    }
  });

  it('gives up after its attempts with the refusal, which says when to come back', async () => {
    const { client, calls } = clientAnswering([{ pushback: '5' }, { pushback: '5' }, { pushback: '7' }]);
    try {
      const error = await replay(client).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolHistoryError);
      expect(error).toMatchObject({ status: 'RESOURCE_EXHAUSTED', retriable: true, retryAfterMs: 7 });
      expect(calls).toHaveLength(3);
    } finally {
      client.close();
    }
  });

  it('fails at once when the pushback would outlast the deadline, or no pushback was given, or retries are off', async () => {
    for (const [answers, options, timeoutMs] of [
      [[{ pushback: '500' }], {}, 200],
      [[{}], {}, 10_000],
      [[{ pushback: '5' }], { maxAttempts: 1 }, 10_000],
    ] as const) {
      const { client, calls } = clientAnswering([...answers], options);
      try {
        const started = Date.now();
        await expect(replay(client, { timeoutMs })).rejects.toMatchObject({ status: 'RESOURCE_EXHAUSTED' });
        expect(calls).toHaveLength(1);
        expect(Date.now() - started).toBeLessThan(150);
      } finally {
        client.close();
      }
    }
  });

  it('stops waiting when the caller aborts', async () => {
    const { client, calls } = clientAnswering([{ pushback: '10000' }]);
    const controller = new AbortController();
    try {
      const answer = replay(client, { timeoutMs: 60_000, signal: controller.signal });
      await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      await expect(answer).rejects.toMatchObject({ status: 'CANCELLED' });
      expect(calls).toHaveLength(1);
    } finally {
      client.close();
    }
  });

  it('refuses a retry option that is not a whole number of attempts', () => {
    expect(() => new ToolHistoryClient({ address: '127.0.0.1:1', retry: { maxAttempts: 0 } })).toThrow(
      'retry.maxAttempts: 0 is not a whole number, 1 or more',
    );
  });
});
