import { AppError, ErrorCode } from '@toolhistory/errors';
import { ConfigFiles, ReadConfigFile, readConfigFileFromDisk } from './config-files';
import { readSettings } from './read-settings';
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
import type { EventStoreKind, LogLevel, ServiceRole } from './settings';
import { type EncryptionConfig, encryptionConfig } from './encryption-config';

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
    /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of each client connection. */
    maxConcurrentStreams: number;
    /** Memory an HTTP/2 session may hold, in MiB (Node's maxSessionMemory). */
    maxSessionMemoryMb: number;
  };
  /** Admission control of reads at the gRPC edge: per lane, calls worked on at once, waiting, and the longest wait. */
  admission: {
    replay: AdmissionLimitsConfig;
    audit: AdmissionLimitsConfig;
    /** Tenants named in the admission metrics; the others are `other`. */
    metricsTenants: number;
    /** While reads are refused, how old a batch the search projections may hold before applying it (0: never hold). */
    searchHoldMs: number;
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
  /** V8's garbage collector: pretenuring, how far the heap grows while the process is busy, and the calls between full collections (docs/adr/035, 036). */
  gc: GcConfig;
  /** Payloads sealed at rest, the keyring and the key store, and the retention sweeper (docs/adr/033). */
  encryption: EncryptionConfig;
  /** OpenTelemetry traces, exported over OTLP/HTTP to `endpoint`; null: no tracing. */
  tracing: { endpoint: string | null; serviceName: string };
  /** Safe but questionable settings, logged once the logger exists. */
  warnings: string[];
}

export interface GcConfig {
  pretenuring: boolean;
  /** Past `callsPerSecond`, the heap grows `heapGrowingPercent` past what a full collection kept before the next (0: V8's own, always). */
  busy: { callsPerSecond: number; heapGrowingPercent: number };
  /** gRPC calls after which a full collection is started if none came meanwhile (0: never started by the process). */
  callsPerFullCollection: number;
}

export interface AdmissionLimitsConfig {
  maxInFlight: number;
  maxQueued: number;
  maxQueueWaitMs: number;
}

/**
 * Reads the environment once, at boot, and the files it names (TLS material,
 * password files). Every problem is listed in a single error, so an operator
 * fixes them in one go: first each value its parser refuses, in the order of
 * the table (settings.ts), then what the rules between variables find.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  readFile: ReadConfigFile = readConfigFileFromDisk,
): AppConfig {
  const settings = readSettings(env);
  const { values: v, given, problems } = settings;
  if (v.EVENT_STORE === 'eventstoredb' && given.EVENTSTORE_URL === undefined)
    problems.push('EVENTSTORE_URL is required when EVENT_STORE is eventstoredb');

  const findings: Findings = { problems, warnings: [] };
  const files = new ConfigFiles(readFile, problems);
  const auth = authConfig(settings, findings);
  const tls = grpcTls(settings, files, findings);
  const roles = v.SERVICE_ROLES;
  // A recorder-only process serves nothing, so the bind rules do not stop it.
  const host = listenHost('GRPC_HOST', settings, auth, roles.includes('grpc') ? findings : { problems: [], warnings: [] });
  const httpHost = listenHost('HTTP_HOST', settings, auth, findings);
  warnOfPlaintextListeners(
    [...(roles.includes('grpc') ? [{ variable: 'GRPC_HOST', host }] : []), { variable: 'HTTP_HOST', host: httpHost }],
    auth,
    tls,
    findings,
  );
  const kafkaSecure = kafkaSecurity(settings, files, findings);
  const password = databasePassword(settings, files, findings);
  const encryption = encryptionConfig(settings, files, findings);

  if (problems.length > 0) {
    throw new AppError(ErrorCode.InvalidConfig, `invalid configuration:\n  - ${problems.join('\n  - ')}`, {
      details: { problems },
    });
  }

  const topic = v.TOOL_EVENTS_TOPIC;
  return {
    kafka: {
      brokers: v.KAFKA_BROKERS,
      clientId: v.KAFKA_CLIENT_ID,
      groupId: v.KAFKA_GROUP_ID,
      topic,
      deadLetterTopic: `${topic}.dlq`,
      partitions: v.TOOL_EVENTS_PARTITIONS,
      replicationFactor: v.KAFKA_REPLICATION_FACTOR,
      partitionsConsumedConcurrently: v.RECORDER_PARTITIONS_CONCURRENCY,
      sessionTimeoutMs: v.KAFKA_SESSION_TIMEOUT_MS,
      ...kafkaSecure,
    },
    database: {
      url: v.DATABASE_URL,
      password,
      schema: v.DATABASE_SCHEMA,
      poolSize: v.DATABASE_POOL_SIZE,
      migrateOnStart: v.MIGRATE_ON_START,
      statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    grpc: {
      host,
      port: v.GRPC_PORT,
      replayCacheBytes: v.REPLAY_CACHE_MB * 1024 * 1024,
      replayMaxDatabaseRequests: v.REPLAY_MAX_DATABASE_REQUESTS,
      tls,
      maxRequestBytes: v.GRPC_MAX_REQUEST_BYTES,
      maxSubscriptionsPerTenant: v.MAX_SUBSCRIPTIONS_PER_TENANT,
      shutdownGraceMs: v.GRPC_SHUTDOWN_GRACE_MS,
      maxConcurrentStreams: v.GRPC_MAX_CONCURRENT_STREAMS,
      maxSessionMemoryMb: v.GRPC_MAX_SESSION_MEMORY_MB,
    },
    admission: {
      replay: {
        maxInFlight: v.ADMISSION_REPLAY_MAX_IN_FLIGHT,
        maxQueued: v.ADMISSION_REPLAY_MAX_QUEUED,
        maxQueueWaitMs: v.ADMISSION_REPLAY_MAX_QUEUE_WAIT_MS,
      },
      audit: {
        maxInFlight: v.ADMISSION_AUDIT_MAX_IN_FLIGHT,
        maxQueued: v.ADMISSION_AUDIT_MAX_QUEUED,
        maxQueueWaitMs: v.ADMISSION_AUDIT_MAX_QUEUE_WAIT_MS,
      },
      metricsTenants: v.ADMISSION_METRICS_TENANTS,
      searchHoldMs: v.ADMISSION_SEARCH_HOLD_MS,
    },
    http: { host: httpHost, port: v.HTTP_PORT, tls },
    auth,
    eventStore: { kind: v.EVENT_STORE, url: v.EVENTSTORE_URL ?? null },
    policyFile: v.POLICY_FILE ?? null,
    roles,
    maxEventBytes: v.MAX_EVENT_BYTES,
    logLevel: v.LOG_LEVEL,
    gc: {
      pretenuring: v.GC_PRETENURING,
      busy: { callsPerSecond: v.GC_BUSY_CALLS_PER_SECOND, heapGrowingPercent: v.GC_BUSY_HEAP_GROWING_PERCENT },
      callsPerFullCollection: v.GC_CALLS_PER_FULL_COLLECTION,
    },
    encryption,
    tracing: { endpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT ?? null, serviceName: v.OTEL_SERVICE_NAME },
    warnings: findings.warnings,
  };
}
