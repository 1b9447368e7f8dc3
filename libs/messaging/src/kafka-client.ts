import { Kafka, type KafkaConfig, logLevel as KafkaLogLevel, type LogEntry, type SASLOptions } from 'kafkajs';

export interface KafkaLog {
  error(obj: object, message: string): void;
  warn(obj: object, message: string): void;
  info(obj: object, message: string): void;
  debug(obj: object, message: string): void;
}

/** A secret the caller holds; revealed only when handed to kafkajs. */
export interface Revealable<T> {
  reveal(): T;
}

export interface KafkaClientSettings {
  brokers: string[];
  clientId: string;
  /** null: plaintext. `ca` null: the system's trusted CAs. */
  ssl?: { ca: Buffer | null; cert: Buffer | null; key: Revealable<Buffer> | null } | null;
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: Revealable<string> } | null;
}

function tlsOptions(ssl: KafkaClientSettings['ssl']): KafkaConfig['ssl'] {
  if (!ssl) return undefined;
  return {
    rejectUnauthorized: true,
    ...(ssl.ca ? { ca: [ssl.ca] } : {}),
    ...(ssl.cert && ssl.key ? { cert: ssl.cert, key: ssl.key.reveal() } : {}),
  };
}

function saslOptions(sasl: KafkaClientSettings['sasl']): SASLOptions | undefined {
  if (!sasl) return undefined;
  const { username } = sasl;
  const password = sasl.password.reveal();
  switch (sasl.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}

/** kafkajs logs go through the service's structured logger instead of its own console format. */
export function createKafka(settings: KafkaClientSettings, log: KafkaLog, { retries = 8 }: { retries?: number } = {}): Kafka {
  return new Kafka({
    clientId: settings.clientId,
    brokers: settings.brokers,
    ssl: tlsOptions(settings.ssl),
    sasl: saslOptions(settings.sasl),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 200, retries },
    logLevel: KafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ level, namespace, log: entry }: LogEntry) => {
        const {
          message,
          timestamp: _timestamp,
          logger: _logger,
          ...rest
        } = entry as typeof entry & { timestamp?: string; logger?: string };
        const fields = { namespace, ...rest };
        if (level === KafkaLogLevel.ERROR) log.error(fields, message);
        else if (level === KafkaLogLevel.WARN) log.warn(fields, message);
        else if (level === KafkaLogLevel.INFO) log.info(fields, message);
        else log.debug(fields, message);
      },
  });
}
