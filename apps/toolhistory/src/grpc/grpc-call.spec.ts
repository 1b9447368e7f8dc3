import { EventEmitter } from 'node:events';
import { status } from '@grpc/grpc-js';
import pino from 'pino';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { answerUnary, budgetOf } from './grpc-call';

const log = pino({ level: 'silent' });

describe('answerUnary', () => {
  it('answers DEADLINE_EXCEEDED when the work outlasts its budget', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(answerUnary(log, 'GetUsage', {}, 20, () => never)).rejects.toMatchObject({
      error: { code: status.DEADLINE_EXCEEDED, message: 'GetUsage did not finish within 20 ms' },
    });
  });

  it('passes the answer through, and maps a classified failure to its status', async () => {
    await expect(answerUnary(log, 'GetUsage', {}, 1_000, async () => 'answer')).resolves.toBe('answer');
    await expect(
      answerUnary(log, 'GetUsage', {}, 1_000, async () => {
        throw new AppError(ErrorCode.InvalidArgument, 'tenant_id is required');
      }),
    ).rejects.toMatchObject({ error: { code: status.INVALID_ARGUMENT, message: 'tenant_id is required' } });
  });

  it("logs a caller's mistake as one info line without a stack, our own fault with its cause", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const recording = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    await answerUnary(recording, 'ListToolInvocations', { tenantId: 't' }, 1_000, async () => {
      throw new AppError(ErrorCode.InvalidArgument, 'from must be before to');
    }).catch(() => undefined);
    await answerUnary(recording, 'ListToolInvocations', { tenantId: 't' }, 1_000, async () => {
      throw new TypeError('boom');
    }).catch(() => undefined);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'ListToolInvocations refused',
      reason: 'from must be before to',
      code: 'INVALID_ARGUMENT',
    });
    expect(lines[0]).not.toHaveProperty('err');
    expect(lines[1]).toMatchObject({ level: 40, msg: 'ListToolInvocations failed', err: expect.objectContaining({ message: 'boom' }) });
  });
});

describe('answerUnary when the caller goes away', () => {
  /** A grpc-js call as the handler sees it: 'cancelled' is emitted on a cancel, a passed deadline or the end. */
  const callOf = () => {
    const call = new EventEmitter() as EventEmitter & { cancelled: boolean; getDeadline: () => number };
    call.cancelled = false;
    call.getDeadline = () => Infinity;
    return call;
  };

  it('does not start work for a call cancelled before its handler ran', async () => {
    const call = callOf();
    call.cancelled = true;
    const work = jest.fn(async () => 'answer');
    await expect(answerUnary(log, 'GetReplayHistory', {}, budgetOf(call, 2_000), work)).rejects.toMatchObject({
      error: { code: status.DEADLINE_EXCEEDED },
    });
    expect(work).not.toHaveBeenCalled();
  });

  it("aborts the running work's signal (its statement is cancelled) when the caller cancels", async () => {
    const call = callOf();
    let seen: AbortSignal | undefined;
    const answering = answerUnary(log, 'GetUsage', {}, budgetOf(call, 30_000), (signal) => {
      seen = signal;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('statement cancelled'))));
    });
    call.emit('cancelled');
    await expect(answering).rejects.toBeDefined();
    expect(seen?.aborted).toBe(true);
  });

  it('logs a dropped call at debug only: a storm of cancellations does not flood the log', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const recording = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const call = callOf();
    call.cancelled = true;
    await answerUnary(recording, 'GetReplayHistory', { tenantId: 't' }, budgetOf(call, 2_000), async () => 'x').catch(() => undefined);
    expect(lines).toEqual([]);
  });
});

describe('budgetOf', () => {
  it("takes the caller's deadline, less a margin to answer in, else the default", () => {
    expect(budgetOf({ getDeadline: () => Infinity }, 2_000).ms).toBe(2_000);
    expect(budgetOf(undefined, 30_000).ms).toBe(30_000);
    const left = budgetOf({ getDeadline: () => new Date(Date.now() + 500) }, 2_000).ms;
    expect(left).toBeGreaterThan(400);
    expect(left).toBeLessThanOrEqual(495);
    expect(budgetOf({ getDeadline: () => Date.now() - 10 }, 2_000).ms).toBe(0);
  });
});
