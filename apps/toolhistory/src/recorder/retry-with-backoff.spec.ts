import { AppError, ErrorCode } from '@toolhistory/errors';
import { retryWithBackoff } from './retry-with-backoff';

const outage = () => new AppError(ErrorCode.StorageUnavailable, 'connection refused');

describe('retryWithBackoff', () => {
  const noSleep = { sleep: async () => undefined, initialDelayMs: 100, maxDelayMs: 1_000 };

  it('retries retriable failures until the work succeeds', async () => {
    let calls = 0;
    const delays: number[] = [];
    const result = await retryWithBackoff(
      async () => {
        calls += 1;
        if (calls < 5) throw outage();
        return 'done';
      },
      { ...noSleep, shouldContinue: () => true, onRetry: (_e, _a, delay) => delays.push(delay) },
    );
    expect(result).toBe('done');
    expect(calls).toBe(5);
    expect(delays).toHaveLength(4);
    delays.forEach((d, i) => expect(d).toBeLessThanOrEqual(Math.min(1_000, 100 * 2 ** i)));
    expect(Math.max(...delays)).toBeGreaterThanOrEqual(400);
  });

  it('retries any failure, a plain TypeError too, when told to (the recorder never throws a batch back to kafkajs)', async () => {
    let calls = 0;
    const seen: string[] = [];
    const result = await retryWithBackoff(
      async () => {
        calls += 1;
        if (calls < 3) throw new TypeError('a bug outside the store');
        return 'done';
      },
      { ...noSleep, shouldContinue: () => true, shouldRetry: () => true, onRetry: (e) => seen.push(`${e.code}:${e.retriable}`) },
    );
    expect(result).toBe('done');
    expect(seen).toEqual(['INTERNAL:false', 'INTERNAL:false']);
  });

  it('rethrows a non-retriable failure at once', async () => {
    let calls = 0;
    const failure = retryWithBackoff(
      async () => {
        calls += 1;
        throw new AppError(ErrorCode.UnstorableEvent, 'bad bytes');
      },
      { ...noSleep, shouldContinue: () => true },
    );
    await expect(failure).rejects.toMatchObject({ code: ErrorCode.UnstorableEvent });
    expect(calls).toBe(1);
  });

  it('gives up when told to stop, rethrowing the last failure', async () => {
    let running = true;
    const failure = retryWithBackoff(
      async () => {
        throw outage();
      },
      { ...noSleep, shouldContinue: () => running, whileWaiting: async () => void (running = false) },
    );
    await expect(failure).rejects.toMatchObject({ code: ErrorCode.StorageUnavailable });
  });

  it('classifies unknown throwables as non-retriable internal errors', async () => {
    await expect(
      retryWithBackoff(
        async () => {
          throw new TypeError('bug');
        },
        { ...noSleep, shouldContinue: () => true },
      ),
    ).rejects.toMatchObject({ code: ErrorCode.Internal, retriable: false });
  });
});
