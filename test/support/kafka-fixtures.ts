import { Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { TEST_KAFKA_BROKERS, uniqueName } from './test-environment';

export function testKafka(clientId = 'toolhistory-test'): Kafka {
  return new Kafka({ clientId, brokers: TEST_KAFKA_BROKERS, logLevel: logLevel.NOTHING, retry: { retries: 10 } });
}

/** A topic and its dead-letter topic that no other test file uses. */
export async function freshTopic(kafka: Kafka, partitions = 3): Promise<{ topic: string; deadLetterTopic: string }> {
  const topic = uniqueName('tool-events').replace(/_/g, '-');
  const deadLetterTopic = `${topic}.dlq`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        { topic, numPartitions: partitions, replicationFactor: 1 },
        { topic: deadLetterTopic, numPartitions: partitions, replicationFactor: 1 },
      ],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  return { topic, deadLetterTopic };
}

export async function connectedProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  return producer;
}

/** Publishes events keyed by conversation, as agent workers do. */
export async function publishEvents(
  producer: Producer,
  topic: string,
  events: readonly (object & { conversationId?: string })[],
): Promise<void> {
  await producer.send({
    topic,
    acks: -1,
    messages: events.map((e) => ({ key: e.conversationId ?? null, value: JSON.stringify(e) })),
  });
}

export interface ConsumedMessage {
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

/** Reads a topic from the beginning until `count` messages arrived or the timeout passed. */
export async function readTopic(kafka: Kafka, topic: string, count: number, timeoutMs = 30_000): Promise<ConsumedMessage[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('reader') });
  const received: ConsumedMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${received.length} of ${count} messages from ${topic}`)), timeoutMs);
      void consumer.run({
        eachMessage: async ({ message, partition }) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
          received.push({
            key: message.key?.toString() ?? null,
            value: message.value?.toString() ?? null,
            headers,
            partition,
            offset: message.offset,
          });
          if (received.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return received;
}
