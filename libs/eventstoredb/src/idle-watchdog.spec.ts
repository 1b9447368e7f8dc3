import { IdleWatchdog } from './idle-watchdog';

describe('IdleWatchdog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts once nothing touched it for the whole period', () => {
    const watchdog = new IdleWatchdog(1_000);
    jest.advanceTimersByTime(999);
    expect(watchdog.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(watchdog.signal.aborted).toBe(true);
  });

  it('counts the period from the last touch', () => {
    const watchdog = new IdleWatchdog(1_000);
    jest.advanceTimersByTime(800);
    watchdog.touch();
    jest.advanceTimersByTime(800);
    expect(watchdog.signal.aborted).toBe(false);
    jest.advanceTimersByTime(200);
    expect(watchdog.signal.aborted).toBe(true);
  });

  it('never aborts once stopped', () => {
    const watchdog = new IdleWatchdog(1_000);
    watchdog.stop();
    jest.advanceTimersByTime(5_000);
    expect(watchdog.signal.aborted).toBe(false);
  });
});
