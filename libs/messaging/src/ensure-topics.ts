import type { Kafka } from 'kafkajs';

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
}

/** Creates missing topics; existing ones are left as they are (partitions are never reduced). */
export async function ensureTopics(kafka: Kafka, topics: readonly TopicSpec[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      await admin.createTopics({ topics: missing.map((t) => ({ ...t })), waitForLeaders: true });
    }
  } finally {
    await admin.disconnect();
  }
}
