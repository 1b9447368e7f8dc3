import { RecordingProgress, type RecordingProgressReader } from '@toolhistory/domain';
import { ErrorCode } from '@toolhistory/errors';
import { ConsistencyGate } from './consistency-gate';

const TOPIC = 'agent.tool-events';
const GROUP = 'toolhistory';
const READ_MODEL = { kind: 'read-model' } as const;
const WORDS = { kind: 'search', projection: 'search', types: ['ToolCallRequested', 'ToolResultReceived'] } as const;

/** The database as the gate reads it, counting reads (unit test of the waiting logic only). */
class FakeProgressReader implements RecordingProgressReader {
  reads = 0;
  offsets = new Map<number, { nextOffset: bigint; position?: bigint }>();
  last = 0n;
  lastOfTypes = 0n;
  checkpoints = new Map<string, bigint>();
  async recordedOffset(_group: string, _topic: string, partition: number) {
    this.reads += 1;
    return this.offsets.get(partition) ?? null;
  }
  async lastPosition() {
    this.reads += 1;
    return this.last;
  }
  async lastPositionOf(_types: readonly string[], atMost: bigint) {
    this.reads += 1;
    return this.lastOfTypes < atMost ? this.lastOfTypes : atMost;
  }
  async checkpoint(projection: string) {
    this.reads += 1;
    return this.checkpoints.get(projection) ?? 0n;
  }
}

function gateWith(options: { readModelProjection?: string | null; partitions?: number[] } = {}) {
  const progress = new RecordingProgress(GROUP);
  const reader = new FakeProgressReader();
  const gate = new ConsistencyGate(progress, reader, {
    consumerGroup: GROUP,
    topic: TOPIC,
    partitions: async () => options.partitions ?? [0, 1, 2],
    rules: { readModelProjection: options.readModelProjection ?? null },
    feedCurrent: () => true,
    pollMs: { feedCurrent: 10_000, feedStale: 10_000 },
  });
  const recorded = (partition: number, nextOffset: bigint, position?: bigint) =>
    progress.heard({ kind: 'recorded', consumerGroup: GROUP, topic: TOPIC, partition, nextOffset, position }, 'feed');
  return { progress, reader, gate, recorded };
}

const after = (token: string, waitMs = 5_000) => ({ token, waitMs });

describe('ConsistencyGate', () => {
  it('waits for nothing and reads nothing without a token', async () => {
    const { gate, reader } = gateWith();
    await expect(gate.awaitRecorded(undefined, READ_MODEL)).resolves.toEqual({ verify: false });
    await expect(gate.awaitRecorded(after(''), READ_MODEL)).resolves.toEqual({ verify: false });
    expect(reader.reads).toBe(0);
  });

  it('answers at once, reading nothing, for a token the change feed already told it', async () => {
    const { gate, reader, recorded } = gateWith();
    recorded(1, 8n);
    await expect(gate.awaitRecorded(after(`ct1:k:${TOPIC}:1:7`), READ_MODEL)).resolves.toEqual({ verify: false });
    expect(reader.reads).toBe(0);
  });

  it('reads the partition once when the feed has not told it, and asks a cache to check its rows', async () => {
    const { gate, reader } = gateWith();
    reader.offsets.set(1, { nextOffset: 9n });
    await expect(gate.awaitRecorded(after(`ct1:k:${TOPIC}:1:7`), READ_MODEL)).resolves.toEqual({ verify: true });
    expect(reader.reads).toBe(1);
  });

  it('waits for the feed to tell it the token is recorded', async () => {
    const { gate, recorded } = gateWith();
    const waiting = gate.awaitRecorded(after(`ct1:k:${TOPIC}:2:40`), READ_MODEL);
    recorded(2, 40n); // not yet past offset 40
    recorded(2, 41n);
    await expect(waiting).resolves.toEqual({ verify: false });
  });

  it('refuses after its wait, naming the token and how far recording has come', async () => {
    const { gate, reader } = gateWith();
    reader.offsets.set(0, { nextOffset: 3n });
    await expect(gate.awaitRecorded(after(`ct1:k:${TOPIC}:0:5`, 30), READ_MODEL)).rejects.toMatchObject({
      code: ErrorCode.NotYetRecorded,
      message: expect.stringMatching(new RegExp(`ct1:k:${TOPIC}:0:5.*recorded up to offset 2, the token names offset 5`)),
    });
  });

  it.each([
    ['not a token', 'garbage', 'does not start with'],
    ['another topic', 'ct1:k:elsewhere:0:1', 'names topic elsewhere'],
    ['a partition the topic lacks', `ct1:k:${TOPIC}:7:1`, 'partition 7'],
  ])('refuses %s as INVALID_ARGUMENT', async (_name, token, says) => {
    const { gate } = gateWith();
    await expect(gate.awaitRecorded(after(token), READ_MODEL)).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining(says),
    });
  });

  it('for a search, waits until its projection has applied the last call or result up to where recording came', async () => {
    const { gate, reader, recorded, progress } = gateWith();
    reader.lastOfTypes = 50n; // the token's own event (a run's end) is at 52; search applies calls and results only
    recorded(0, 11n, 52n);
    const waiting = gate.awaitRecorded(after(`ct1:k:${TOPIC}:0:10`), WORDS);
    await new Promise((r) => setImmediate(r));
    progress.heard({ kind: 'checkpoint', projection: 'search', position: 49n }, 'feed');
    progress.heard({ kind: 'checkpoint', projection: 'search', position: 50n }, 'feed');
    await expect(waiting).resolves.toEqual({ verify: false });
  });

  it('with the read model following another event store, waits for its projection to pass the recorded position', async () => {
    const { gate, recorded, progress } = gateWith({ readModelProjection: 'read-model' });
    recorded(0, 11n, 9_000n);
    const waiting = gate.awaitRecorded(after(`ct1:k:${TOPIC}:0:10`), READ_MODEL);
    progress.heard({ kind: 'checkpoint', projection: 'read-model', position: 9_000n }, 'feed');
    await expect(waiting).resolves.toEqual({ verify: false });
    await expect(gate.awaitRecorded(after(`ct1:k:${TOPIC}:0:10`), WORDS)).rejects.toMatchObject({ code: ErrorCode.NotSupported });
  });

  it('takes a position token (a fork) once the store has reached it', async () => {
    const { gate, reader } = gateWith();
    reader.last = 120n;
    await expect(gate.awaitRecorded(after('ct1:p:120'), READ_MODEL)).resolves.toEqual({ verify: false });
    await expect(gate.awaitRecorded(after('ct1:p:121', 30), READ_MODEL)).rejects.toMatchObject({ code: ErrorCode.NotYetRecorded });
  });
});
