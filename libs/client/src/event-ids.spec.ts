import fc from 'fast-check';
import { deriveEventId, EventIdentity, nameBasedUuid } from './event-ids';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('name-based event ids', () => {
  it('match RFC 9562 version 5 (the DNS namespace and www.example.com)', () => {
    expect(nameBasedUuid('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => nameBasedUuid('x', 'not-a-uuid')).toThrow(/namespace/);
  });

  const run = fc.record({ tenantId: fc.string(), conversationId: fc.string(), runId: fc.string() });
  const identity: fc.Arbitrary<EventIdentity> = fc.oneof(
    fc.record({
      type: fc.constantFrom('ToolCallRequested' as const, 'ToolResultReceived' as const),
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
