import { validateSync } from 'class-validator';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { ENVIRONMENT_VARIABLE_NAMES, EnvironmentVariables } from './environment-variables';

export type ServiceRole = 'recorder' | 'grpc';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type EventStoreKind = 'postgres' | 'eventstoredb';

export interface AppConfig {
  kafka: {
    brokers: string[];
    clientId: string;
    groupId: string;
    topic: string;
    deadLetterTopic: string;
    partitions: number;
    replicationFactor: number;
    partitionsConsumedConcurrently: number;
    sessionTimeoutMs: number;
  };
  database: {
    url: string;
    schema: string;
    poolSize: number;
    migrateOnStart: boolean;
  };
  grpc: { port: number; replayCacheBytes: number };
  /** Where events are stored: PostgreSQL (beside the read model), or EventStoreDB / KurrentDB at `url`. */
  eventStore: { kind: EventStoreKind; url: string | null };
  policyFile: string | null;
  roles: ServiceRole[];
  maxEventBytes: number;
  logLevel: LogLevel;
}

export const CONFIG_DEFAULTS = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  KAFKA_CLIENT_ID: 'toolhistory',
  KAFKA_GROUP_ID: 'toolhistory-recorder',
  TOOL_EVENTS_TOPIC: 'agent.tool-events',
  TOOL_EVENTS_PARTITIONS: '6',
  KAFKA_REPLICATION_FACTOR: '1',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/toolhistory',
  DATABASE_SCHEMA: 'public',
  DATABASE_POOL_SIZE: '10',
  GRPC_PORT: '50051',
  SERVICE_ROLES: 'recorder,grpc',
  MAX_EVENT_BYTES: String(1024 * 1024),
  MIGRATE_ON_START: 'true',
  LOG_LEVEL: 'info',
  RECORDER_PARTITIONS_CONCURRENCY: '3',
  KAFKA_SESSION_TIMEOUT_MS: '30000',
  REPLAY_CACHE_MB: '128',
  EVENT_STORE: 'postgres',
} as const;

/**
 * Reads the environment once, at boot. Every problem is listed in a single
 * error, so an operator fixes them in one go.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const raw: Record<string, string> = {};
  for (const name of ENVIRONMENT_VARIABLE_NAMES) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const problems = validateSync(Object.assign(new EnvironmentVariables(), raw)).flatMap((e) => Object.values(e.constraints ?? {}));

  const v = { ...CONFIG_DEFAULTS, ...raw } as typeof CONFIG_DEFAULTS & EnvironmentVariables;
  const port = Number(v.GRPC_PORT);
  if (Number.isInteger(port) && (port < 1 || port > 65535)) problems.push('GRPC_PORT must be between 1 and 65535');
  const eventStore = v.EVENT_STORE as EventStoreKind;
  if (eventStore === 'eventstoredb' && v.EVENTSTORE_URL === undefined)
    problems.push('EVENTSTORE_URL is required when EVENT_STORE is eventstoredb');

  if (problems.length > 0) {
    throw new AppError(ErrorCode.InvalidConfig, `invalid configuration:\n  - ${problems.join('\n  - ')}`, {
      details: { problems },
    });
  }

  const topic = v.TOOL_EVENTS_TOPIC;
  return {
    kafka: {
      brokers: v.KAFKA_BROKERS.split(','),
      clientId: v.KAFKA_CLIENT_ID,
      groupId: v.KAFKA_GROUP_ID,
      topic,
      deadLetterTopic: `${topic}.dlq`,
      partitions: Number(v.TOOL_EVENTS_PARTITIONS),
      replicationFactor: Number(v.KAFKA_REPLICATION_FACTOR),
      partitionsConsumedConcurrently: Number(v.RECORDER_PARTITIONS_CONCURRENCY),
      sessionTimeoutMs: Number(v.KAFKA_SESSION_TIMEOUT_MS),
    },
    database: {
      url: v.DATABASE_URL,
      schema: v.DATABASE_SCHEMA,
      poolSize: Number(v.DATABASE_POOL_SIZE),
      migrateOnStart: v.MIGRATE_ON_START === 'true' || v.MIGRATE_ON_START === '1',
    },
    grpc: { port, replayCacheBytes: Number(v.REPLAY_CACHE_MB) * 1024 * 1024 },
    eventStore: { kind: eventStore, url: v.EVENTSTORE_URL ?? null },
    policyFile: v.POLICY_FILE ?? null,
    roles: [...new Set(v.SERVICE_ROLES.split(',') as ServiceRole[])],
    maxEventBytes: Number(v.MAX_EVENT_BYTES),
    logLevel: v.LOG_LEVEL as LogLevel,
  };
}
