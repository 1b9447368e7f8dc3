import { type DeadLetterPlace, type DeadLetterTopic, placeKey, type RedriveLedger, type StoredDeadLetter } from '@toolhistory/domain';
import { ErrorCode } from '@toolhistory/errors';
import { RedriveDeadLetters } from './redrive-dead-letters';

const letter = (offset: string, errorCode: string, stub = false): StoredDeadLetter => ({
  topic: 'events.dlq',
  partition: 0,
  offset,
  key: 'c',
  value: stub ? null : Buffer.from(`{"n":${offset}}`),
  errorCode,
  reason: 'r',
  original: { topic: 'events', partition: 0, offset, timestamp: '0' },
  deadLetteredAt: '2026-11-23T08:00:00.000Z',
  stub,
});

/** The topic and ledger in memory (unit test of the redrive rules only). */
class MemoryTopic implements DeadLetterTopic {
  readonly name = 'events.dlq';
  readonly published: string[] = [];
  failNext = false;
  constructor(private readonly letters: StoredDeadLetter[]) {}
  async read() {
    return this.letters;
  }
  async republish(l: StoredDeadLetter) {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('broker down');
    }
    this.published.push(l.offset);
  }
}

class MemoryLedger implements RedriveLedger {
  readonly claims = new Map<string, string>();
  async redriven(places: readonly DeadLetterPlace[]) {
    return new Set(places.map(placeKey).filter((k) => this.claims.has(k)));
  }
  async claimAndPublish(place: DeadLetterPlace, by: string, publish: () => Promise<void>) {
    if (this.claims.has(placeKey(place))) return false;
    await publish(); // throws before the claim is kept, as the transaction rolls back
    this.claims.set(placeKey(place), by);
    return true;
  }
}

describe('RedriveDeadLetters', () => {
  const setup = () => {
    const topic = new MemoryTopic([letter('1', 'NOT_JSON'), letter('2', 'OVERSIZE'), letter('3', 'OVERSIZE', true)]);
    const ledger = new MemoryLedger();
    return { topic, ledger, redrive: new RedriveDeadLetters(topic, ledger) };
  };
  const command = { filter: {}, all: false, dryRun: false, by: 'ops' };

  it('needs a selection or --all', async () => {
    const { redrive } = setup();
    await expect(redrive.execute(command)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
  });

  it('publishes each selected letter once, never a stub, and a dry run publishes nothing', async () => {
    const { redrive, topic, ledger } = setup();
    expect(await redrive.execute({ ...command, filter: { codes: ['OVERSIZE'] }, dryRun: true })).toEqual({
      published: [],
      wouldPublish: ['0:2'],
      alreadyRedriven: [],
      stubs: ['0:3'],
    });
    expect(topic.published).toEqual([]);
    expect(await redrive.execute({ ...command, all: true })).toMatchObject({ published: ['0:1', '0:2'], stubs: ['0:3'] });
    expect(await redrive.execute({ ...command, all: true })).toMatchObject({ published: [], alreadyRedriven: ['0:1', '0:2'] });
    expect(topic.published).toEqual(['1', '2']);
    expect(ledger.claims.get('events.dlq/0/1')).toBe('ops');
  });

  it('leaves a letter unclaimed when publishing it fails, so the next redrive sends it', async () => {
    const { redrive, topic } = setup();
    topic.failNext = true;
    await expect(redrive.execute({ ...command, filter: { places: ['0:1'] } })).rejects.toThrow('broker down');
    expect(await redrive.execute({ ...command, filter: { places: ['0:1'] } })).toMatchObject({ published: ['0:1'] });
  });
});
