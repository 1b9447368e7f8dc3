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
  @Matches(POSITIVE_INT, { message: 'REPLAY_MAX_DATABASE_REQUESTS must be a positive integer' })
  REPLAY_MAX_DATABASE_REQUESTS?: string;

  @IsOptional()
  @IsIn(['postgres', 'eventstoredb'], { message: 'EVENT_STORE must be one of: postgres, eventstoredb' })
  EVENT_STORE?: string;

  // The schemes the EventStoreDB client understands (KurrentDB servers take the same strings).
  @IsOptional()
  @Matches(/^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\/\S+$/, {
    message: 'EVENTSTORE_URL must be a kurrentdb:// or kurrentdb+discover:// connection string (esdb:// is still read)',
  })
  EVENTSTORE_URL?: string;

  // gRPC transport and callers

  @IsOptional()
  @Matches(/^(\[?[0-9a-fA-F:.]+\]?|[a-zA-Z0-9]([a-zA-Z0-9.-]{0,251}[a-zA-Z0-9])?)$/, {
    message: 'GRPC_HOST must be an IP address or a host name',
  })
  GRPC_HOST?: string;

  // Metrics, health and the console over HTTP

  @IsOptional()
  @Matches(/^\d{1,5}$/, { message: 'HTTP_PORT must be a port number (0: any free port)' })
  HTTP_PORT?: string;

  @IsOptional()
  @Matches(/^(\[?[0-9a-fA-F:.]+\]?|[a-zA-Z0-9]([a-zA-Z0-9.-]{0,251}[a-zA-Z0-9])?)$/, {
    message: 'HTTP_HOST must be an IP address or a host name',
  })
  HTTP_HOST?: string;

  @IsOptional() @IsString() GRPC_TLS_CERT_FILE?: string;
  @IsOptional() @IsString() GRPC_TLS_KEY_FILE?: string;
  @IsOptional() @IsString() GRPC_TLS_CLIENT_CA_FILE?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'GRPC_MAX_REQUEST_BYTES must be a positive integer' })
  GRPC_MAX_REQUEST_BYTES?: string;

  @IsOptional()
  @Matches(POSITIVE_INT, { message: 'MAX_SUBSCRIPTIONS_PER_TENANT must be a positive integer' })
  MAX_SUBSCRIPTIONS_PER_TENANT?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'GRPC_SHUTDOWN_GRACE_MS must be a whole number of milliseconds' })
  GRPC_SHUTDOWN_GRACE_MS?: string;

  @IsOptional() @IsIn(['jwt', 'none'], { message: 'AUTH_MODE must be one of: jwt, none' }) AUTH_MODE?: string;
  @IsOptional() @IsString() AUTH_JWKS_FILE?: string;
  @IsOptional() @Matches(/^https?:\/\/\S+$/, { message: 'AUTH_JWKS_URL must be an https:// URL' }) AUTH_JWKS_URL?: string;
  @IsOptional() @IsString() AUTH_ISSUER?: string;
  @IsOptional() @IsString() AUTH_AUDIENCE?: string;

  // Tracing (OpenTelemetry): off unless an OTLP endpoint is given

  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, {
    message: "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (the collector's OTLP/HTTP base)",
  })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  @IsOptional()
  @Matches(/^[\w.-]{1,64}$/, { message: 'OTEL_SERVICE_NAME must be 1 to 64 letters, digits, dots, dashes or underscores' })
  OTEL_SERVICE_NAME?: string;

  // Kafka client security

  @IsOptional() @Matches(BOOLEAN, { message: 'KAFKA_SSL must be true or false' }) KAFKA_SSL?: string;
  @IsOptional() @IsString() KAFKA_SSL_CA_FILE?: string;
  @IsOptional() @IsString() KAFKA_SSL_CERT_FILE?: string;
  @IsOptional() @IsString() KAFKA_SSL_KEY_FILE?: string;

  @IsOptional()
  @IsIn(['plain', 'scram-sha-256', 'scram-sha-512'], {
    message: 'KAFKA_SASL_MECHANISM must be one of: plain, scram-sha-256, scram-sha-512',
  })
  KAFKA_SASL_MECHANISM?: string;

  @IsOptional() @IsString() KAFKA_SASL_USERNAME?: string;
  @IsOptional() @IsString() KAFKA_SASL_PASSWORD?: string;
  @IsOptional() @IsString() KAFKA_SASL_PASSWORD_FILE?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds (0: none)' })
  DATABASE_STATEMENT_TIMEOUT_MS?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds (0: none)' })
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS?: string;

  // PostgreSQL client security

  @IsOptional() @IsString() DATABASE_PASSWORD_FILE?: string;
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
  'REPLAY_MAX_DATABASE_REQUESTS',
  'EVENT_STORE',
  'EVENTSTORE_URL',
  'GRPC_HOST',
  'HTTP_PORT',
  'HTTP_HOST',
  'GRPC_TLS_CERT_FILE',
  'GRPC_TLS_KEY_FILE',
  'GRPC_TLS_CLIENT_CA_FILE',
  'GRPC_MAX_REQUEST_BYTES',
  'MAX_SUBSCRIPTIONS_PER_TENANT',
  'GRPC_SHUTDOWN_GRACE_MS',
  'AUTH_MODE',
  'AUTH_JWKS_FILE',
  'AUTH_JWKS_URL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_SERVICE_NAME',
  'AUTH_ISSUER',
  'AUTH_AUDIENCE',
  'KAFKA_SSL',
  'KAFKA_SSL_CA_FILE',
  'KAFKA_SSL_CERT_FILE',
  'KAFKA_SSL_KEY_FILE',
  'KAFKA_SASL_MECHANISM',
  'KAFKA_SASL_USERNAME',
  'KAFKA_SASL_PASSWORD',
  'KAFKA_SASL_PASSWORD_FILE',
  'DATABASE_PASSWORD_FILE',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS',
] as const);
