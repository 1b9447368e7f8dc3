import type { Admin, Kafka } from 'kafkajs';
import type { RecordingStore } from '@toolhistory/domain';
import type { Samples } from '../observability/service-metrics';

const ANSWER_WITHIN_MS = 2_000;

const within = <T>(work: Promise<T>): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS).unref(),
    ),
  ]);

/**
 * How far recording is behind the broker, per partition: the partition's
 * end offset minus the next offset PostgreSQL (not Kafka) says is to be
 * recorded; from the partition's start when nothing was recorded yet.
 */
export class ConsumerLag {
  private admin?: Admin;

  constructor(
    private readonly kafka: Kafka,
    private readonly store: Pick<RecordingStore, 'committedOffsets'>,
    private readonly groupId: string,
    private readonly topic: string,
  ) {}

  /** Empty when the broker or the database does not answer in time: a missing series, not a wrong one. */
  async read(): Promise<Samples<'topic' | 'partition'>> {
    try {
      const [ends, committed] = await Promise.all([
        within(this.connected().then((a) => a.fetchTopicOffsets(this.topic))),
        this.store.committedOffsets(this.groupId, this.topic),
      ]);
      return ends.map(({ partition, high, low }) => ({
        labels: { topic: this.topic, partition },
        value: Math.max(0, Number(BigInt(high) - BigInt(committed.get(partition) ?? low))),
      }));
    } catch {
      await this.close();
      return [];
    }
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }

  private async connected(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    return this.admin;
  }
}
