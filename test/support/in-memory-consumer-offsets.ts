import type { ConsumerOffsets, Offset, PartitionRef } from '../../libs/domain/src';

/** The recorder's offsets in memory, for an event store tested without the read model's database. */
export class InMemoryConsumerOffsets implements ConsumerOffsets {
  private readonly offsets = new Map<string, { partition: PartitionRef; next: Offset }>();

  async committed(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    const out = new Map<number, Offset>();
    for (const { partition, next } of this.offsets.values())
      if (partition.consumerGroup === consumerGroup && partition.topic === topic) out.set(partition.partition, next);
    return out;
  }

  /** Forward only, as the table's `greatest`. */
  async advance(partition: PartitionRef, nextOffset: Offset): Promise<void> {
    const key = JSON.stringify([partition.consumerGroup, partition.topic, partition.partition]);
    const current = this.offsets.get(key);
    if (current === undefined || BigInt(nextOffset) > BigInt(current.next))
      this.offsets.set(key, { partition: { ...partition }, next: nextOffset });
  }
}
