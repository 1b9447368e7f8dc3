import { AppError, ErrorCode } from '@toolhistory/errors';
import { ATTEMPTS_PER_EVENT } from './attempt-alone';
import { narrowDownFailures } from './narrow-down-failures';

const unstorable = () => new AppError(ErrorCode.UnstorableEvent, 'rejected');
const outage = () => new AppError(ErrorCode.StorageUnavailable, 'connection refused');

describe('narrowDownFailures', () => {
  it('answers what the whole answered when it passes, and tries nothing alone', async () => {
    const tryOne = jest.fn(async () => undefined);
    const setAside = jest.fn(async () => undefined);
    await expect(narrowDownFailures(['a', 'b'], async () => 42, tryOne, setAside)).resolves.toEqual({ whole: true, result: 42 });
    expect(tryOne).not.toHaveBeenCalled();
    expect(setAside).not.toHaveBeenCalled();
  });

  it('lets a failure that may pass go up, without trying any item alone', async () => {
    const tryOne = jest.fn(async () => undefined);
    await expect(
      narrowDownFailures(
        ['a'],
        async () => {
          throw outage();
        },
        tryOne,
        async () => undefined,
      ),
    ).rejects.toMatchObject({ code: ErrorCode.StorageUnavailable });
    expect(tryOne).not.toHaveBeenCalled();
  });

  it('tries each item alone after any other failure, and sets aside the one that keeps failing, with its failure', async () => {
    const tries = new Map<string, number>();
    const setAside: Array<[string, string]> = [];
    const outcome = await narrowDownFailures(
      ['a', 'bad', 'flaky', 'c'],
      async () => {
        throw new Error('a bug somewhere');
      },
      async (item) => {
        const attempt = (tries.get(item) ?? 0) + 1;
        tries.set(item, attempt);
        if (item === 'bad' || (item === 'flaky' && attempt === 1)) throw unstorable();
      },
      async (item, failure) => void setAside.push([item, failure.code]),
    );
    expect(outcome).toEqual({ whole: false });
    expect(Object.fromEntries(tries)).toEqual({ a: 1, bad: ATTEMPTS_PER_EVENT, flaky: 2, c: 1 });
    expect(setAside).toEqual([['bad', ErrorCode.UnstorableEvent]]);
  });

  it('lets a failure that may pass go up while items are tried alone', async () => {
    const tried: string[] = [];
    await expect(
      narrowDownFailures(
        ['a', 'b', 'c'],
        async () => {
          throw unstorable();
        },
        async (item) => {
          tried.push(item);
          if (item === 'b') throw outage();
        },
        async () => undefined,
      ),
    ).rejects.toMatchObject({ code: ErrorCode.StorageUnavailable });
    expect(tried).toEqual(['a', 'b']);
  });
});
