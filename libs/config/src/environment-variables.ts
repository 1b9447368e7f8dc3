import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';

const HOST_PORT_LIST = /^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/;
const POSITIVE_INT = /^[1-9]\d*$/;
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const TOPIC = /^[a-zA-Z0-9._-]{1,200}$/;
const ROLE_LIST = /^(recorder|grpc)(,(recorder|grpc))*$/;
const BOOLEAN = /^(true|false|1|0)$/;

/**
 * The environment as strings, with the rule each variable must meet.
 * Every variable is optional: the defaults in load-config.ts apply.
 */
export class EnvironmentVariables {
  @IsOptional()
  @Matches(HOST_PORT_LIST, { message: 'KAFKA_BROKERS must be a comma-separated list of host:port' })
  KAFKA_BROKERS?: string;

  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'KAFKA_CLIENT_ID must not be empty' })
  KAFKA_CLIENT_ID?: string;

  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'KAFKA_GROUP_ID must not be empty' })
  KAFKA_GROUP_ID?: string;

  @IsOptional()
  @Matches(TOPIC, { message: 'TOOL_EVENTS_TOPIC must be a Kafka topic name (letters, digits, ".", "_", "-")' })
  TOOL_EVENTS_TOPIC?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'TOOL_EVENTS_PARTITIONS must be a positive integer' })
  TOOL_EVENTS_PARTITIONS?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'KAFKA_REPLICATION_FACTOR must be a positive integer' })
  KAFKA_REPLICATION_FACTOR?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @IsOptional()
  @Matches(IDENTIFIER, { message: 'DATABASE_SCHEMA must be a lower-case SQL identifier' })
  DATABASE_SCHEMA?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'DATABASE_POOL_SIZE must be a positive integer' })
  DATABASE_POOL_SIZE?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'GRPC_PORT must be a port number' })
  GRPC_PORT?: string;

  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'POLICY_FILE must not be empty when set' })
  POLICY_FILE?: string;

  @IsOptional()
  @Matches(ROLE_LIST, { message: 'SERVICE_ROLES must be a comma-separated list of: recorder, grpc' })
  SERVICE_ROLES?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'MAX_EVENT_BYTES must be a positive integer' })
  MAX_EVENT_BYTES?: string;

  @IsOptional()
  @Matches(BOOLEAN, { message: 'MIGRATE_ON_START must be true or false' })
  MIGRATE_ON_START?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'RECORDER_PARTITIONS_CONCURRENCY must be a positive integer' })
  RECORDER_PARTITIONS_CONCURRENCY?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'KAFKA_SESSION_TIMEOUT_MS must be a positive integer' })
  KAFKA_SESSION_TIMEOUT_MS?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'REPLAY_CACHE_MB must be a whole number (0 disables the cache)' })
  REPLAY_CACHE_MB?: string;

  @IsOptional()
  @IsIn(['postgres', 'eventstoredb'], { message: 'EVENT_STORE must be one of: postgres, eventstoredb' })
  EVENT_STORE?: string;

  // The schemes the EventStoreDB client understands (KurrentDB servers take the same strings).
  @IsOptional()
  @Matches(/^esdb(\+discover)?:\/\/\S+$/, { message: 'EVENTSTORE_URL must be an esdb:// or esdb+discover:// connection string' })
  EVENTSTORE_URL?: string;
}

export const ENVIRONMENT_VARIABLE_NAMES = Object.freeze([
  'KAFKA_BROKERS',
  'KAFKA_CLIENT_ID',
  'KAFKA_GROUP_ID',
  'TOOL_EVENTS_TOPIC',
  'TOOL_EVENTS_PARTITIONS',
  'KAFKA_REPLICATION_FACTOR',
  'DATABASE_URL',
  'DATABASE_SCHEMA',
  'DATABASE_POOL_SIZE',
  'GRPC_PORT',
  'POLICY_FILE',
  'SERVICE_ROLES',
  'MAX_EVENT_BYTES',
  'MIGRATE_ON_START',
  'LOG_LEVEL',
  'RECORDER_PARTITIONS_CONCURRENCY',
  'KAFKA_SESSION_TIMEOUT_MS',
  'REPLAY_CACHE_MB',
  'EVENT_STORE',
  'EVENTSTORE_URL',
] as const);
