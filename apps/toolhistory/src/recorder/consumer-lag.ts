import type { RecordingStore } from '@toolhistory/domain';
import type { KafkaMessaging } from '@toolhistory/messaging';
import type { Samples } from '../observability/service-metrics';

const ANSWER_WITHIN_MS = 2_000;

/**
 * How far recording is behind the broker, per partition: the partition's
 * end offset minus the next offset PostgreSQL (not the broker) says is to
 * be recorded; from the partition's start when nothing was recorded yet.
 */
export class ConsumerLag {
  constructor(
    private readonly messaging: Pick<KafkaMessaging, 'partitionEnds'>,
    private readonly store: Pick<RecordingStore, 'committedOffsets'>,
    private readonly groupId: string,
    private readonly topic: string,
  ) {}

  /** Empty when the broker or the database does not answer in time: a missing series, not a wrong one. */
  async read(): Promise<Samples<'topic' | 'partition'>> {
    try {
      const [ends, committed] = await Promise.all([
        this.messaging.partitionEnds(this.topic, ANSWER_WITHIN_MS),
        this.store.committedOffsets(this.groupId, this.topic),
      ]);
      return ends.map(({ partition, high, low }) => ({
        labels: { topic: this.topic, partition },
        value: Math.max(0, Number(BigInt(high) - BigInt(committed.get(partition) ?? low))),
      }));
    } catch {
      return [];
    }
  }
}
