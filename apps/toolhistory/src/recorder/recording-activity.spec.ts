import { RecordingActivity } from './recording-activity';

describe('RecordingActivity', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.parse('2026-11-23T10:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('is busy while a batch is recorded and for a moment after the last one, then quiet', () => {
    const activity = new RecordingActivity();
    expect(activity.busy()).toBe(false);
    activity.begin();
    activity.begin();
    activity.end();
    jest.advanceTimersByTime(5_000);
    expect(activity.busy()).toBe(true); // one batch still in flight
    activity.end();
    jest.advanceTimersByTime(99);
    expect(activity.busy()).toBe(true);
    jest.advanceTimersByTime(1);
    expect(activity.busy()).toBe(false);
  });
});
