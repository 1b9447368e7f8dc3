import { Kafka, logLevel as KafkaLogLevel, LogEntry } from 'kafkajs';

export interface KafkaLog {
  error(obj: object, message: string): void;
  warn(obj: object, message: string): void;
  info(obj: object, message: string): void;
  debug(obj: object, message: string): void;
}

export interface KafkaClientSettings {
  brokers: string[];
  clientId: string;
}

/** kafkajs logs go through the service's structured logger instead of its own console format. */
export function createKafka(settings: KafkaClientSettings, log: KafkaLog): Kafka {
  return new Kafka({
    clientId: settings.clientId,
    brokers: settings.brokers,
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 200, retries: 8 },
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
