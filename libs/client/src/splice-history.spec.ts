import fc from 'fast-check';
import { type SpliceableTurn, spliceHistory } from './splice-history';

interface Host {
  id?: string;
  text: string;
}

/** Host messages by id; `-` has no id. */
const hostOf = (ids: string[]): Host[] => ids.map((id) => (id === '-' ? { text: '-' } : { id, text: id }));
const turn = (name: string, assistantMessageId: string, afterMessageId?: string): SpliceableTurn<string> => ({
  assistantMessageId,
  ...(afterMessageId === undefined ? {} : { afterMessageId }),
  messages: [`${name}.call`, `${name}.result`],
});
const texts = (out: Array<Host | string>) => out.map((m) => (typeof m === 'string' ? m : m.text));

describe('spliceHistory', () => {
  it.each<[string, string[], SpliceableTurn<string>[], string[]]>([
    [
      'a completed turn goes right before its answer',
      ['u1', 'a1', 'u2', 'a2', 'u3'],
      [turn('T1', 'a1'), turn('T2', 'a2')],
      ['u1', 'T1.call', 'T1.result', 'a1', 'u2', 'T2.call', 'T2.result', 'a2', 'u3'],
    ],
    ['a completed turn whose answer the host lacks is left out', ['u1', 'a1'], [turn('T1', 'gone', 'u1')], ['u1', 'a1']],
    [
      'a turn without an answer goes right after the message it started from',
      ['u1', 'a1', 'u2'],
      [turn('T1', '', 'u1')],
      ['u1', 'T1.call', 'T1.result', 'a1', 'u2'],
    ],
    [
      'a turn without an answer whose message the host lacks goes after the last message',
      ['u1', 'a1'],
      [turn('T1', '', 'gone')],
      ['u1', 'a1', 'T1.call', 'T1.result'],
    ],
    ['a turn with neither goes after the last message', ['u1', 'a1', 'u2'], [turn('T1', '')], ['u1', 'a1', 'u2', 'T1.call', 'T1.result']],
    ['an empty afterMessageId is none', ['u1', 'a1'], [turn('T1', '', '')], ['u1', 'a1', 'T1.call', 'T1.result']],
    ['an answer wins over afterMessageId', ['u1', 'x', 'a1'], [turn('T1', 'a1', 'u1')], ['u1', 'x', 'T1.call', 'T1.result', 'a1']],
    [
      'turns at the same place keep their order: a failed run after u1, then its retry answered with a1',
      ['u1', 'a1'],
      [turn('T1', '', 'u1'), turn('T2', 'a1', 'u1'), turn('T3', '', 'u1')],
      ['u1', 'T1.call', 'T1.result', 'T2.call', 'T2.result', 'T3.call', 'T3.result', 'a1'],
    ],
    [
      'turns after the last message keep their order',
      ['u1'],
      [turn('T1', ''), turn('T2', '', 'u1'), turn('T3', '', 'gone')],
      ['u1', 'T1.call', 'T1.result', 'T2.call', 'T2.result', 'T3.call', 'T3.result'],
    ],
    ['with no host messages, only turns without an answer remain', [], [turn('T1', 'a1'), turn('T2', '', 'u1')], ['T2.call', 'T2.result']],
    [
      'ids match the first host message that has them; messages without an id match nothing',
      ['-', 'u1', 'a1', 'u1', 'a1'],
      [turn('T1', 'a1'), turn('T2', '', 'u1')],
      ['-', 'u1', 'T1.call', 'T1.result', 'T2.call', 'T2.result', 'a1', 'u1', 'a1'],
    ],
  ])('%s', (_case, hostIds, turns, expected) => {
    expect(texts(spliceHistory(hostOf(hostIds), turns, (m) => m.id))).toEqual(expected);
  });

  it('does not change its inputs', () => {
    const host = hostOf(['u1', 'a1']);
    const turns = [turn('T1', 'a1'), turn('T2', '', 'u1')];
    const before = structuredClone({ host, turns });
    spliceHistory(host, turns, (m) => m.id);
    expect({ host, turns }).toEqual(before);
  });

  describe('for any host messages and turns', () => {
    const ids = fc.constantFrom('u1', 'a1', 'u2', 'a2', 'u3');
    const host = fc.array(fc.record({ id: fc.option(ids, { nil: undefined }), text: fc.string() }), { maxLength: 8 });
    const turns = fc.array(
      fc.record({
        assistantMessageId: fc.oneof(fc.constant(''), ids),
        afterMessageId: fc.option(fc.oneof(fc.constant(''), ids, fc.constant('gone')), { nil: undefined }),
        size: fc.integer({ min: 1, max: 3 }),
      }),
      { maxLength: 8 },
    );
    /** Turn i's messages are i*10, i*10+1, ...: unique, and they say whose they are. */
    const spliceable = (shapes: Array<{ assistantMessageId: string; afterMessageId?: string; size: number }>) =>
      shapes.map(({ size, ...ids }, i) => ({ ...ids, messages: Array.from({ length: size }, (_, k) => i * 10 + k) }));

    it('keeps every host message, in order; places every turn without an answer once, and one with an answer iff the host has it', () => {
      fc.assert(
        fc.property(host, turns, (hostMessages, shapes) => {
          const spliced = spliceable(shapes);
          const out = spliceHistory(hostMessages, spliced, (m) => m.id);
          expect(out.filter((m) => typeof m === 'object')).toEqual(hostMessages);
          const hostIds = new Set<string | undefined>(hostMessages.map((m) => m.id));
          const placed = spliced.filter((t) => t.assistantMessageId === '' || hostIds.has(t.assistantMessageId));
          // Each placed turn's messages appear once, together and in order; nothing else appears.
          expect(out.filter((m) => typeof m === 'number')).toHaveLength(placed.reduce((n, t) => n + t.messages.length, 0));
          for (const t of placed) {
            const at = out.indexOf(t.messages[0]);
            expect(out.slice(at, at + t.messages.length)).toEqual(t.messages);
          }
        }),
      );
    });

    it('puts a turn right before its answer, else right after its message, else at the end; turns at one place in their order', () => {
      fc.assert(
        fc.property(host, turns, (hostMessages, shapes) => {
          const spliced = spliceable(shapes);
          const out = spliceHistory(hostMessages, spliced, (m) => m.id);
          const first = (id: string | undefined) => (id ? hostMessages.find((m) => m.id === id) : undefined);
          /** The host messages around a turn's segment. */
          const around = (t: { messages: number[] }) => {
            const at = out.indexOf(t.messages[0]);
            const before = out.slice(0, at).filter((m) => typeof m === 'object');
            const after = out.slice(at).find((m) => typeof m === 'object');
            return { previous: before.at(-1), next: after };
          };
          const placed = spliced.filter((t) => out.includes(t.messages[0]));
          for (const t of placed) {
            const { previous, next } = around(t);
            if (t.assistantMessageId !== '') expect(next).toBe(first(t.assistantMessageId));
            else if (first(t.afterMessageId) !== undefined) expect(previous).toBe(first(t.afterMessageId));
            else expect(next).toBeUndefined();
          }
          for (let i = 0; i < placed.length; i++) {
            for (let j = i + 1; j < placed.length; j++) {
              if (around(placed[i]).next === around(placed[j]).next) {
                expect(out.indexOf(placed[i].messages[0])).toBeLessThan(out.indexOf(placed[j].messages[0]));
              }
            }
          }
        }),
      );
    });
  });
});
