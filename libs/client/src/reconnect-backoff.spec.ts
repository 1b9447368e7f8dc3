import fc from 'fast-check';
import { pause, reconnectDelayMs } from './reconnect-backoff';

describe('reconnect backoff', () => {
  it('waits between half and all of 100 ms doubling per failure, never more than 5 s', () => {
    fc.assert(
      fc.property(fc.nat(60), (failures) => {
        const ceiling = Math.min(5_000, 100 * 2 ** failures);
        const delay = reconnectDelayMs(failures);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }),
    );
  });

  it('ends a pause early, with false, when the signal aborts', async () => {
    const controller = new AbortController();
    const paused = pause(600_000, controller.signal);
    controller.abort();
    await expect(paused).resolves.toBe(false);
    await expect(pause(1, controller.signal)).resolves.toBe(false);
  });

  it('completes a pause with true when nothing aborts it', async () => {
    await expect(pause(1, new AbortController().signal)).resolves.toBe(true);
    await expect(pause(1, undefined)).resolves.toBe(true);
  });
});
