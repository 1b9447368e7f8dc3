import { ChangeSignal, ConversationChangeHub } from './conversation-change-hub';

describe('ConversationChangeHub', () => {
  it('tells the watches of a changed conversation, and every watch after a gap or a rebuild', () => {
    const hub = new ConversationChangeHub();
    const a = jest.fn();
    const b = jest.fn();
    const stopA = hub.follow({ tenantId: 't', conversationId: 'a' }, a);
    hub.follow({ tenantId: 't', conversationId: 'b' }, b);
    hub.changed([
      { tenantId: 't', conversationId: 'a' },
      { tenantId: 'u', conversationId: 'b' },
    ]);
    expect([a.mock.calls.length, b.mock.calls.length]).toEqual([1, 0]);
    hub.stale();
    hub.current();
    hub.changedAll();
    expect([a.mock.calls.length, b.mock.calls.length]).toEqual([3, 2]);
    stopA();
    stopA();
    hub.changedAll();
    expect([a.mock.calls.length, b.mock.calls.length]).toEqual([3, 3]);
  });

  it('lets a watch wait for the next change, remembering one that came while it was busy', async () => {
    const signal = new ChangeSignal();
    const abort = new AbortController();
    signal.notify();
    signal.notify();
    await signal.next(abort.signal);
    let woke = false;
    const waiting = signal.next(abort.signal).then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    signal.notify();
    await waiting;
    expect(woke).toBe(true);
    const aborted = signal.next(abort.signal);
    abort.abort();
    await aborted;
  });
});
