import fc from 'fast-check';
import { deriveEventId, EventIdentity, nameBasedUuid } from './event-ids';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('name-based event ids', () => {
  it('match RFC 9562 version 5 (the DNS namespace and www.example.com)', () => {
    expect(nameBasedUuid('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  // Fixed values: a worker retrying after an upgrade must get the ids it got before, or its retried steps are recorded twice.
  describe('of a step, pinned', () => {
    const pinnedRun = { tenantId: 'acme', conversationId: 'conv-1', runId: 'run-7' };
    const step = { roundIndex: 1, sequenceIndex: 2, toolCallId: 'call_9' };
    it.each([
      ['ToolCallRequested', '5739160f-b9ea-540d-af24-49523030daa1'],
      ['ToolResultReceived', 'a2611be5-345b-566f-9b22-4091ccbac6c5'],
      ['ToolApprovalRequested', 'f97eab93-a519-54db-9fa5-eb1048add998'],
      ['ToolApprovalDecided', '4b05bd7f-cda7-5f68-9335-7f7c094aa3f6'],
    ] as const)('%s is %s', (type, id) => {
      expect(deriveEventId(pinnedRun, { type, ...step })).toBe(id);
    });
    it.each([
      ['RunCompleted', '9cd228e5-324c-5663-a25c-c7b2a0a251ea'],
      ['RunFailed', '1d1768ce-700d-577a-9ff2-fd3099a2a374'],
    ] as const)('%s is %s', (type, id) => {
      expect(deriveEventId(pinnedRun, { type })).toBe(id);
    });
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => nameBasedUuid('x', 'not-a-uuid')).toThrow(/namespace/);
  });

  const run = fc.record({ tenantId: fc.string(), conversationId: fc.string(), runId: fc.string() });
  const identity: fc.Arbitrary<EventIdentity> = fc.oneof(
    fc.record({
      type: fc.constantFrom(
        'ToolCallRequested' as const,
        'ToolResultReceived' as const,
        'ToolApprovalRequested' as const,
        'ToolApprovalDecided' as const,
      ),
      roundIndex: fc.nat(),
      sequenceIndex: fc.nat(),
      toolCallId: fc.string(),
    }),
    fc.record({ type: fc.constantFrom('RunCompleted' as const, 'RunFailed' as const) }),
  );

  it('are the same for the same step of the same run, and a version 5 UUID', () => {
    fc.assert(
      fc.property(run, identity, (r, i) => {
        const id = deriveEventId(r, i);
        expect(id).toMatch(UUID_V5);
        expect(deriveEventId({ ...r }, { ...i })).toBe(id);
      }),
    );
  });

  it('differ when the run or the step differs', () => {
    fc.assert(
      fc.property(run, identity, run, identity, (r1, i1, r2, i2) => {
        fc.pre(
          JSON.stringify([r1.tenantId, r1.conversationId, r1.runId, i1]) !== JSON.stringify([r2.tenantId, r2.conversationId, r2.runId, i2]),
        );
        expect(deriveEventId(r1, i1)).not.toBe(deriveEventId(r2, i2));
      }),
    );
  });

  it('keep parts apart whatever they hold', () => {
    const call = { type: 'RunCompleted' as const };
    expect(deriveEventId({ tenantId: 'a', conversationId: 'b|c', runId: 'd' }, call)).not.toBe(
      deriveEventId({ tenantId: 'a', conversationId: 'b', runId: 'c|d' }, call),
    );
  });
});
