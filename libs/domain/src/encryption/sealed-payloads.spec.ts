import fc from 'fast-check';
import type { SealedPayload, StoredToolEvent } from '@toolhistory/contract';
import { approvalDecided, approvalRequested, runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import type { OpenRequest, PayloadVault, SealRequest } from '../ports/payload-vault.port';
import { keyScopeOf, openEvents, PAYLOAD_MEMBERS, payloadOf, sealEvents, storedForm, withoutSealNote } from './sealed-payloads';

/** A stand-in vault for the pure rules: "seals" by base64, a key per scope, and forgets keys on demand. */
function fakeVault() {
  const keys = new Map<string, string>();
  const destroyed = new Set<string>();
  const vault: PayloadVault = {
    async seal(requests: readonly SealRequest[]): Promise<SealedPayload[]> {
      return requests.map(({ scope, plaintext }) => {
        const slot = JSON.stringify([scope.tenantId, scope.conversationId, scope.expiresAt, scope.via]);
        if (!keys.has(slot)) keys.set(slot, `k${keys.size + 1}`);
        return { key: keys.get(slot)!, expiresAt: scope.expiresAt, data: Buffer.from(plaintext).toString('base64') };
      });
    },
    async open(requests: readonly OpenRequest[]) {
      return requests.map(({ sealed }) => (destroyed.has(sealed.key) ? null : Buffer.from(sealed.data!, 'base64').toString()));
    },
  };
  return { vault, destroy: (key: string) => destroyed.add(key) };
}

const run = { tenantId: 't', conversationId: 'c', runId: 'r' };
const AT = { roundIndex: 0, sequenceIndex: 0 };
const trace = (): StoredToolEvent[] => [
  toolCall(run, { ...AT, toolCallId: 'a', toolName: 'get_order', arguments: { id: 42, note: 'ann@example.org' } }),
  toolResult(run, { ...AT, toolCallId: 'a', result: 'shipped' }),
  approvalRequested(run, { ...AT, toolCallId: 'a', reason: 'refund of 20 EUR' }),
  approvalDecided(run, { ...AT, toolCallId: 'a', approved: false, reason: 'over the limit', decidedBy: 'pat' }),
  runCompleted(run, { assistantMessageId: 'm1' }),
];

describe('sealed payloads', () => {
  it('names the payload members of every event type that carries text of a person, a tool or the model', () => {
    expect(PAYLOAD_MEMBERS).toEqual({
      ToolCallRequested: ['arguments'],
      ToolResultReceived: ['result'],
      ToolApprovalRequested: ['reason'],
      ToolApprovalDecided: ['reason'],
      ModelResponseReceived: ['text'],
    });
  });

  it('stores a sealed event without its payload members, ids, names, times and approval facts in clear', async () => {
    const { vault } = fakeVault();
    const sealed = await sealEvents(trace(), vault, (e) => keyScopeOf(e, null));
    const stored = sealed.map(storedForm);
    expect(stored[0]).not.toHaveProperty('arguments');
    expect(stored[0]).toMatchObject({ toolName: 'get_order', toolCallId: 'a', sealed: { key: 'k1', expiresAt: null } });
    expect(stored[1]).not.toHaveProperty('result');
    expect(stored[3]).toMatchObject({ approved: false, decidedBy: 'pat' });
    expect(stored[3]).not.toHaveProperty('reason');
    // A run's end carries no payload: nothing sealed.
    expect(stored[4]).toEqual(sealed[4]);
    expect(stored[4]).not.toHaveProperty('sealed');
  });

  it('opens what it sealed into the same events (the note aside)', async () => {
    const { vault } = fakeVault();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.object(), async (result, args) => {
        const events: StoredToolEvent[] = [
          toolCall(run, { ...AT, toolCallId: 'x', arguments: args as never }),
          toolResult(run, { ...AT, toolCallId: 'x', result: result as never }),
        ];
        const stored = (await sealEvents(events, vault, (e) => keyScopeOf(e, null))).map(storedForm);
        const opened = await openEvents(stored, vault);
        expect(opened.map(withoutSealNote)).toEqual(JSON.parse(JSON.stringify(events)));
      }),
    );
  });

  it('reads an event whose data key is gone as expired, with empty members where the contract needs them', async () => {
    const { vault, destroy } = fakeVault();
    const stored = (await sealEvents(trace(), vault, (e) => keyScopeOf(e, '2026-01-02T00:00:00.000Z'))).map(storedForm);
    destroy(stored[0].sealed!.key);
    const [call, result, request] = await openEvents(stored, vault);
    expect(call).toMatchObject({ arguments: {}, payloadExpired: true });
    expect(result).toMatchObject({ result: null, payloadExpired: true });
    expect(request).toMatchObject({ payloadExpired: true });
    expect(request).not.toHaveProperty('reason');
    expect(payloadOf(request)).toBeNull();
  });

  it('gives a fork copy a key scope of its own, naming where its payload came from', () => {
    const copy = { ...trace()[0], conversationId: 'fork', forkedFrom: { conversationId: 'c', position: '7', via: ['c'] } };
    expect(keyScopeOf(copy, null)).toEqual({ tenantId: 't', conversationId: 'fork', expiresAt: null, via: ['c'] });
  });
});
