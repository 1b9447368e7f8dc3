import { parsePlace, placeOf, selectDeadLetters, type StoredDeadLetter } from './stored-dead-letter';

const letter = (partition: number, offset: string, errorCode: string, deadLetteredAt: string): StoredDeadLetter => ({
  topic: 'events.dlq',
  partition,
  offset,
  key: 'c',
  value: Buffer.from('{}'),
  errorCode,
  reason: 'r',
  original: { topic: 'events', partition, offset: '1', timestamp: '0' },
  deadLetteredAt,
  stub: false,
});

describe('selecting dead letters', () => {
  const letters = [
    letter(0, '1', 'NOT_JSON', '2026-11-23T08:00:00.000Z'),
    letter(0, '2', 'INVALID_EVENT', '2026-11-23T09:00:00.000Z'),
    letter(1, '1', 'OVERSIZE', '2026-11-23T10:00:00.000Z'),
  ];
  const places = (filter: Parameters<typeof selectDeadLetters>[1]) => selectDeadLetters(letters, filter).map(placeOf);

  it('selects by every condition given, all of them at once', () => {
    expect(places({})).toEqual(['0:1', '0:2', '1:1']);
    expect(places({ codes: ['NOT_JSON', 'OVERSIZE'] })).toEqual(['0:1', '1:1']);
    expect(places({ since: Date.parse('2026-11-23T09:00:00Z') })).toEqual(['0:2', '1:1']);
    expect(places({ partition: 0 })).toEqual(['0:1', '0:2']);
    expect(places({ places: ['1:1', '5:5'] })).toEqual(['1:1']);
    expect(places({ partition: 0, codes: ['OVERSIZE'] })).toEqual([]);
  });

  it('reads places as partition:offset, naming a malformed one', () => {
    expect(parsePlace('2:0017')).toEqual({ partition: 2, offset: '17' });
    expect(parsePlace('2-17')).toEqual({ problem: '"2-17" is not a dead letter\'s place: write partition:offset, e.g. 0:42' });
    expect(parsePlace(':')).toHaveProperty('problem');
  });
});
