import { validateSync } from 'class-validator';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { ConfigFiles, ReadConfigFile, readConfigFileFromDisk } from './config-files';
import { ENVIRONMENT_VARIABLE_NAMES, EnvironmentVariables } from './environment-variables';
import type { Secret } from './secret';
import {
  AuthConfig,
  authConfig,
  databasePassword,
  Findings,
  listenHost,
  warnOfPlaintextListeners,
  grpcTls,
  KafkaSecurity,
  kafkaSecurity,
  TlsFiles,
} from './security-config';

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
  } & KafkaSecurity;
  database: {
    /** Without the password when DATABASE_PASSWORD_FILE holds it. */
    url: string;
    password: Secret | null;
    schema: string;
    /** Connections of each role's pool (the recorder and the gRPC server have one each). */
    poolSize: number;
    migrateOnStart: boolean;
    statementTimeoutMs: number;
    idleInTransactionTimeoutMs: number;
  };
  grpc: {
    host: string;
    port: number;
    replayCacheBytes: number;
    /** Replay requests that may wait on the database at once; more are refused with RESOURCE_EXHAUSTED. */
    replayMaxDatabaseRequests: number;
    tls: TlsFiles | null;
    maxRequestBytes: number;
    maxSubscriptionsPerTenant: number;
    shutdownGraceMs: number;
  };
  /** Metrics, health (and later the console) over HTTP; HTTPS with the gRPC certificate when TLS is configured. */
  http: {
    host: string;
    /** 0: any free port (logged at start). */
    port: number;
    tls: TlsFiles | null;
  };
  auth: AuthConfig;
  /** Where events are stored: PostgreSQL (beside the read model), or EventStoreDB / KurrentDB at `url`. */
  eventStore: { kind: EventStoreKind; url: string | null };
  policyFile: string | null;
  roles: ServiceRole[];
  maxEventBytes: number;
  logLevel: LogLevel;
  /** OpenTelemetry traces, exported over OTLP/HTTP to `endpoint`; null: no tracing. */
  tracing: { endpoint: string | null; serviceName: string };
  /** Safe but questionable settings, logged once the logger exists. */
  warnings: string[];
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
  HTTP_PORT: '9464',
  REPLAY_MAX_DATABASE_REQUESTS: '256',
  EVENT_STORE: 'postgres',
  GRPC_MAX_REQUEST_BYTES: String(64 * 1024),
  MAX_SUBSCRIPTIONS_PER_TENANT: '16',
  GRPC_SHUTDOWN_GRACE_MS: '10000',
  DATABASE_STATEMENT_TIMEOUT_MS: '30000',
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
} as const;

/**
 * Reads the environment once, at boot, and the files it names (TLS material,
 * password files). Every problem is listed in a single error, so an operator
 * fixes them in one go.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  readFile: ReadConfigFile = readConfigFileFromDisk,
): AppConfig {
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

  const findings: Findings = { problems, warnings: [] };
  const files = new ConfigFiles(readFile, problems);
  const auth = authConfig(v, findings);
  const tls = grpcTls(v, files, findings);
  const roles = [...new Set(v.SERVICE_ROLES.split(',') as ServiceRole[])];
  // A recorder-only process serves nothing, so the bind rules do not stop it.
  const host = listenHost('GRPC_HOST', v, auth, roles.includes('grpc') ? findings : { problems: [], warnings: [] });
  const httpHost = listenHost('HTTP_HOST', v, auth, findings);
  warnOfPlaintextListeners(
    [...(roles.includes('grpc') ? [{ variable: 'GRPC_HOST', host }] : []), { variable: 'HTTP_HOST', host: httpHost }],
    auth,
    tls,
    findings,
  );
  const httpPort = Number(v.HTTP_PORT);
  if (Number.isInteger(httpPort) && httpPort > 65535) problems.push('HTTP_PORT must be between 0 and 65535');
  const kafkaSecure = kafkaSecurity(v, files, findings);
  const password = databasePassword(v, files, findings);

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
      ...kafkaSecure,
    },
    database: {
      url: v.DATABASE_URL,
      password,
      schema: v.DATABASE_SCHEMA,
      poolSize: Number(v.DATABASE_POOL_SIZE),
      migrateOnStart: v.MIGRATE_ON_START === 'true' || v.MIGRATE_ON_START === '1',
      statementTimeoutMs: Number(v.DATABASE_STATEMENT_TIMEOUT_MS),
      idleInTransactionTimeoutMs: Number(v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS),
    },
    grpc: {
      host,
      port,
      replayCacheBytes: Number(v.REPLAY_CACHE_MB) * 1024 * 1024,
      replayMaxDatabaseRequests: Number(v.REPLAY_MAX_DATABASE_REQUESTS),
      tls,
      maxRequestBytes: Number(v.GRPC_MAX_REQUEST_BYTES),
      maxSubscriptionsPerTenant: Number(v.MAX_SUBSCRIPTIONS_PER_TENANT),
      shutdownGraceMs: Number(v.GRPC_SHUTDOWN_GRACE_MS),
    },
    http: { host: httpHost, port: httpPort, tls },
    auth,
    eventStore: { kind: eventStore, url: v.EVENTSTORE_URL ?? null },
    policyFile: v.POLICY_FILE ?? null,
    roles,
    maxEventBytes: Number(v.MAX_EVENT_BYTES),
    logLevel: v.LOG_LEVEL as LogLevel,
    tracing: { endpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT ?? null, serviceName: v.OTEL_SERVICE_NAME ?? 'toolhistory' },
    warnings: findings.warnings,
  };
}
