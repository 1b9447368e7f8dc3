import fc from 'fast-check';
import { spliceHistory } from './splice-history';

interface Host {
  id?: string;
  text: string;
}

describe('spliceHistory', () => {
  it('puts each turn before the host message it completed with', () => {
    const host: Host[] = [{ text: 'u1' }, { id: 'a1', text: 'answer 1' }, { text: 'u2' }, { id: 'a2', text: 'answer 2' }, { text: 'u3' }];
    const turns = [
      { assistantMessageId: 'a1', messages: ['call 1', 'result 1'] },
      { assistantMessageId: 'a2', messages: ['call 2', 'result 2'] },
      { assistantMessageId: 'gone', messages: ['call 3'] },
    ];
    expect(spliceHistory(host, turns, (m) => m.id).map((m) => (typeof m === 'string' ? m : m.text))).toEqual([
      'u1',
      'call 1',
      'result 1',
      'answer 1',
      'u2',
      'call 2',
      'result 2',
      'answer 2',
      'u3',
    ]);
  });

  it('keeps every host message in order and places each known turn exactly once, right before its message', () => {
    const ids = fc.constantFrom('a', 'b', 'c', 'd');
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.option(ids, { nil: undefined }), text: fc.string() })),
        fc.array(fc.record({ assistantMessageId: ids, messages: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) })),
        (host, turns) => {
          const out = spliceHistory(host, turns, (m) => m.id);
          expect(out.filter((m) => typeof m === 'object')).toEqual(host);
          const spliced = out.filter((m) => typeof m === 'number');
          const placed = new Set(host.map((m) => m.id).filter((id) => id !== undefined));
          const expected = turns.filter((t) => placed.has(t.assistantMessageId));
          expect(spliced).toHaveLength(expected.reduce((n, t) => n + t.messages.length, 0));
          for (const id of placed) {
            const at = out.findIndex((m) => typeof m === 'object' && m.id === id);
            const segment = expected.filter((t) => t.assistantMessageId === id).flatMap((t) => t.messages);
            expect(out.slice(at - segment.length, at)).toEqual(segment);
          }
        },
      ),
    );
  });
});
