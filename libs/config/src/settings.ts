import {
  boolean,
  duration,
  eventStoreUrl,
  filePath,
  host,
  hostPortList,
  httpUrl,
  identifier,
  keyStoreUrl,
  listOf,
  nonEmpty,
  oneOf,
  type Parser,
  port,
  portOrZero,
  positiveInt,
  postgresUrl,
  serviceName,
  text,
  topicName,
  wholeMillis,
  wholeNumber,
} from './parsers';

export const SERVICE_ROLE_NAMES = ['recorder', 'grpc'] as const;
export type ServiceRole = (typeof SERVICE_ROLE_NAMES)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const EVENT_STORE_KINDS = ['postgres', 'eventstoredb'] as const;
export type EventStoreKind = (typeof EVENT_STORE_KINDS)[number];
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type KafkaSaslMechanism = (typeof SASL_MECHANISMS)[number];

/** The groups of the reference in docs/configuration.md, in its order, with their headings. */
export const SETTING_GROUPS = {
  kafka: 'Kafka',
  kafkaSecurity: 'Kafka client security',
  database: 'PostgreSQL',
  eventStore: 'Event store',
  grpc: 'gRPC',
  admission: 'Admission control of reads',
  replay: 'Replay and redaction',
  encryption: 'Encryption at rest and retention',
  http: 'HTTP: metrics, probes, audit console',
  tls: 'TLS of the gRPC and HTTP servers',
  auth: 'Authentication of callers',
  tracing: 'Tracing (OpenTelemetry)',
  process: 'Process',
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

/** One environment variable. */
export interface Setting<T = unknown> {
  readonly name: string;
  readonly group: SettingGroup;
  /** Turns the variable's text into its value, or names the problem. */
  readonly parse: Parser<T>;
  /** The text that applies when the variable is unset; without one, the value is undefined then. */
  readonly default?: string;
  /** For the docs, when there is no fixed default: what unset means (Markdown). */
  readonly whenUnset?: string;
  /** One line for the docs (Markdown). */
  readonly description: string;
}

/**
 * Every environment variable the service reads: validation, defaults, the
 * typed values and the reference in docs/configuration.md (`npm run
 * config:generate`) all come from here. Problems are listed in this order.
 * Rules between variables (a URL required by a choice, the bind and TLS
 * rules, password files) are in load-config.ts and security-config.ts.
 */
export const SETTINGS = [
  // Kafka
  {
    name: 'KAFKA_BROKERS',
    group: 'kafka',
    parse: hostPortList,
    default: '127.0.0.1:9092',
    description: 'comma-separated `host:port` list',
  },
  { name: 'KAFKA_CLIENT_ID', group: 'kafka', parse: nonEmpty, default: 'toolhistory', description: 'Kafka client id' },
  {
    name: 'KAFKA_GROUP_ID',
    group: 'kafka',
    parse: nonEmpty,
    default: 'toolhistory-recorder',
    description: 'consumer group of the recorders',
  },
  {
    name: 'TOOL_EVENTS_TOPIC',
    group: 'kafka',
    parse: topicName,
    default: 'agent.tool-events',
    description: 'events topic; dead letters go to `<topic>.dlq`',
  },
  {
    name: 'TOOL_EVENTS_PARTITIONS',
    group: 'kafka',
    parse: positiveInt,
    default: '6',
    description: 'partitions of the topics the service creates when they are missing',
  },
  {
    name: 'KAFKA_REPLICATION_FACTOR',
    group: 'kafka',
    parse: positiveInt,
    default: '1',
    description: 'replication factor of those topics',
  },
  {
    name: 'KAFKA_SESSION_TIMEOUT_MS',
    group: 'kafka',
    parse: positiveInt,
    default: '30000',
    description: 'consumer session timeout: how soon the group notices a dead recorder',
  },
  {
    name: 'RECORDER_PARTITIONS_CONCURRENCY',
    group: 'kafka',
    parse: positiveInt,
    default: '6',
    description: 'partitions one recorder takes batches of at once (with PostgreSQL they are recorded together, one transaction)',
  },
  {
    name: 'MAX_EVENT_BYTES',
    group: 'kafka',
    parse: positiveInt,
    default: String(1024 * 1024),
    description: 'larger events are dead-lettered',
  },

  // Kafka client security
  {
    name: 'KAFKA_SSL',
    group: 'kafkaSecurity',
    parse: boolean,
    default: 'false',
    description: "TLS to the brokers (the system's CAs unless `KAFKA_SSL_CA_FILE`)",
  },
  {
    name: 'KAFKA_SSL_CA_FILE',
    group: 'kafkaSecurity',
    parse: filePath,
    description: "PEM of the CA that signed the brokers' certificates",
  },
  {
    name: 'KAFKA_SSL_CERT_FILE',
    group: 'kafkaSecurity',
    parse: filePath,
    description: 'a client certificate (PEM), for brokers that require one; with `KAFKA_SSL_KEY_FILE` (both or neither)',
  },
  {
    name: 'KAFKA_SSL_KEY_FILE',
    group: 'kafkaSecurity',
    parse: filePath,
    description: "the client certificate's private key (PEM); with `KAFKA_SSL_CERT_FILE` (both or neither)",
  },
  {
    name: 'KAFKA_SASL_MECHANISM',
    group: 'kafkaSecurity',
    parse: oneOf(SASL_MECHANISMS),
    description: '`plain`, `scram-sha-256` or `scram-sha-512`; needs `KAFKA_SASL_USERNAME` and a password',
  },
  { name: 'KAFKA_SASL_USERNAME', group: 'kafkaSecurity', parse: text, description: 'SASL user' },
  {
    name: 'KAFKA_SASL_PASSWORD',
    group: 'kafkaSecurity',
    parse: text,
    description: 'the SASL password; or `KAFKA_SASL_PASSWORD_FILE` (one of the two)',
  },
  {
    name: 'KAFKA_SASL_PASSWORD_FILE',
    group: 'kafkaSecurity',
    parse: filePath,
    description: 'a file holding the SASL password (one trailing line break ignored); or `KAFKA_SASL_PASSWORD` (one of the two)',
  },

  // PostgreSQL
  {
    name: 'DATABASE_URL',
    group: 'database',
    parse: postgresUrl,
    default: 'postgres://postgres@127.0.0.1:5432/toolhistory',
    description:
      'PostgreSQL; the database is created when missing. libpq parameters in the URL are honoured, e.g. `?sslmode=verify-full&sslrootcert=/etc/ssl/pg-ca.pem`',
  },
  {
    name: 'DATABASE_PASSWORD_FILE',
    group: 'database',
    parse: filePath,
    description: 'a file holding the database password, kept out of the URL (a URL with a password as well is refused)',
  },
  { name: 'DATABASE_SCHEMA', group: 'database', parse: identifier, default: 'public', description: 'schema of the tables' },
  {
    name: 'DATABASE_POOL_SIZE',
    group: 'database',
    parse: positiveInt,
    default: '10',
    description: "connections of each role's pool: the recorder and the gRPC server have one each, so neither can starve the other",
  },
  {
    name: 'DATABASE_STATEMENT_TIMEOUT_MS',
    group: 'database',
    parse: wholeMillis('0: none'),
    default: '30000',
    description:
      "a statement of the service running longer is cancelled by PostgreSQL (`0`: no limit); a query whose caller's deadline has passed is cancelled at once",
  },
  {
    name: 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS',
    group: 'database',
    parse: wholeMillis('0: none'),
    default: '60000',
    description: 'a session left idle inside a transaction this long is ended, releasing its locks (`0`: never)',
  },
  { name: 'MIGRATE_ON_START', group: 'database', parse: boolean, default: 'true', description: 'apply pending migrations at start-up' },

  // Event store
  {
    name: 'EVENT_STORE',
    group: 'eventStore',
    parse: oneOf(EVENT_STORE_KINDS),
    default: 'postgres',
    description:
      'where the event store lives: `postgres` (beside the read model) or `eventstoredb` (EventStoreDB / KurrentDB, see [Operating](operating.md#eventstoredb--kurrentdb))',
  },
  {
    name: 'EVENTSTORE_URL',
    group: 'eventStore',
    parse: eventStoreUrl,
    description:
      'KurrentDB / EventStoreDB connection string, e.g. `kurrentdb://127.0.0.1:2113?tls=false` (`kurrentdb://` or `kurrentdb+discover://`; the older `esdb://` still works, with a deprecation warning from the client); required when `EVENT_STORE=eventstoredb`',
  },

  // gRPC
  { name: 'GRPC_PORT', group: 'grpc', parse: port, default: '50051', description: 'gRPC port (ToolHistory and grpc.health.v1.Health)' },
  {
    name: 'GRPC_HOST',
    group: 'grpc',
    parse: host,
    whenUnset: '`127.0.0.1` without authentication, `0.0.0.0` with',
    description: 'address the gRPC server listens on; a non-loopback address without authentication stops start-up unless `AUTH_MODE=none`',
  },
  {
    name: 'GRPC_MAX_REQUEST_BYTES',
    group: 'grpc',
    parse: positiveInt,
    default: String(64 * 1024),
    description: 'larger requests are refused with `RESOURCE_EXHAUSTED`',
  },
  {
    name: 'MAX_SUBSCRIPTIONS_PER_TENANT',
    group: 'grpc',
    parse: positiveInt,
    default: '16',
    description:
      'open `SubscribeToolEvents` and `WatchConversation` streams (the console live timelines among them) per tenant on one instance',
  },
  {
    name: 'GRPC_SHUTDOWN_GRACE_MS',
    group: 'grpc',
    parse: wholeMillis(),
    default: '10000',
    description: 'on SIGTERM, how long calls in flight may take to finish before they are cancelled',
  },

  {
    name: 'GRPC_MAX_CONCURRENT_STREAMS',
    group: 'grpc',
    parse: positiveInt,
    default: '1000',
    description:
      'calls (streams) one client connection may have open at once (HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`); a client past it waits for one of its own to end',
  },
  {
    name: 'GRPC_MAX_SESSION_MEMORY_MB',
    group: 'grpc',
    parse: positiveInt,
    default: '64',
    description:
      "memory one client connection's HTTP/2 session may hold (headers and frames not yet taken); past it, new calls on that connection are refused (`RESOURCE_EXHAUSTED`) until it falls",
  },

  // Admission control of reads
  {
    name: 'ADMISSION_REPLAY_MAX_IN_FLIGHT',
    group: 'admission',
    parse: positiveInt,
    default: '32',
    description:
      '`GetReplayHistory` calls this instance works on at once, from the cache or the database (see [Overload](operating.md#overload-admission-control))',
  },
  {
    name: 'ADMISSION_REPLAY_MAX_QUEUED',
    group: 'admission',
    parse: wholeNumber('0: none waits'),
    default: '64',
    description:
      'replay calls that may wait for one of those slots, taken by tenant in turn; one more is refused at once with `RESOURCE_EXHAUSTED` and `grpc-retry-pushback-ms`',
  },
  {
    name: 'ADMISSION_REPLAY_MAX_QUEUE_WAIT_MS',
    group: 'admission',
    parse: wholeMillis(),
    default: '100',
    description: 'a replay call that waited this long for a slot is refused',
  },
  {
    name: 'ADMISSION_AUDIT_MAX_IN_FLIGHT',
    group: 'admission',
    parse: positiveInt,
    default: '4',
    description:
      '`ListToolInvocations`, `SearchToolHistory`, `GetUsage` calls and `WatchConversation` snapshots worked on at once; keep it under `DATABASE_POOL_SIZE` so replays keep connections',
  },
  {
    name: 'ADMISSION_AUDIT_MAX_QUEUED',
    group: 'admission',
    parse: wholeNumber('0: none waits'),
    default: '16',
    description: 'of those, calls that may wait for a slot; one more is refused at once',
  },
  {
    name: 'ADMISSION_AUDIT_MAX_QUEUE_WAIT_MS',
    group: 'admission',
    parse: wholeMillis(),
    default: '1000',
    description: 'an audit call that waited this long for a slot is refused',
  },
  {
    name: 'ADMISSION_METRICS_TENANTS',
    group: 'admission',
    parse: wholeNumber('0: none by name'),
    default: '100',
    description:
      'tenants named in the admission metrics (the first seen since start); the others are counted as `other`, so the series stay bounded',
  },
  {
    name: 'ADMISSION_SEARCH_HOLD_MS',
    group: 'admission',
    parse: wholeMillis('0: search never holds'),
    default: '30000',
    description:
      "while this instance refuses reads, the search projections hold their next batch so the cores go to the reads, until the batch's oldest event is this old: in a flood, search falls at most this far behind (recording and replay never wait)",
  },

  // Replay and redaction
  {
    name: 'POLICY_FILE',
    group: 'replay',
    parse: filePath,
    description: 'replay and redaction policy (JSON, see [policy.md](policy.md)); validated at start-up',
  },
  {
    name: 'REPLAY_CACHE_MB',
    group: 'replay',
    parse: wholeNumber('0 disables the cache'),
    default: '128',
    description:
      'cache of conversations and computed histories per instance, bounded by bytes counting both (at most 16 request shapes per conversation); `0` disables it (see [the replay cache](#the-replay-cache))',
  },
  {
    name: 'REPLAY_MAX_DATABASE_REQUESTS',
    group: 'replay',
    parse: positiveInt,
    default: '256',
    description:
      'replay requests of this instance that may wait on the database at once (reads and version lookups); one more is refused at once with `RESOURCE_EXHAUSTED`',
  },

  // Encryption at rest and retention
  {
    name: 'ENCRYPTION_AT_REST',
    group: 'encryption',
    parse: oneOf(['on', 'off']),
    default: 'on',
    description:
      '`on`: every payload rests sealed (AES-256-GCM) under a data key of its conversation and retention period, the keys wrapped by the keyring and kept in the key store; `off`: payloads rest in clear and retention is not enforced (a warning at every start)',
  },
  {
    name: 'ENCRYPTION_KEYRING_FILE',
    group: 'encryption',
    parse: filePath,
    description:
      'the keyring, JSON `{ "active": "k2", "keys": { "k1": "<32 bytes, base64>", "k2": "…" } }`: the active key wraps new data keys, the others still unwrap theirs (rotation); required while `ENCRYPTION_AT_REST` is `on`',
  },
  {
    name: 'KEYSTORE_URL',
    group: 'encryption',
    parse: keyStoreUrl,
    description:
      'where the wrapped data keys live, apart from the payloads: `postgres://…` (a database of its own, tables in `DATABASE_SCHEMA`, created when missing) or `file:///path` (a directory, for one machine); required while `ENCRYPTION_AT_REST` is `on`',
  },
  {
    name: 'KEYSTORE_PASSWORD_FILE',
    group: 'encryption',
    parse: filePath,
    description: "a file holding the key store database's password, kept out of `KEYSTORE_URL`",
  },
  {
    name: 'RETENTION_SWEEP_INTERVAL',
    group: 'encryption',
    parse: duration,
    default: '1m',
    description:
      'how often the recorder role removes payloads past their retention from the read model and search, and destroys their data keys (`ms`, `s`, `m`, `h`)',
  },

  // HTTP
  {
    name: 'HTTP_PORT',
    group: 'http',
    parse: portOrZero,
    default: '9464',
    description: 'HTTP port of `/metrics`, `/livez` and `/readyz`, in every role (`0`: any free port, logged at start-up)',
  },
  {
    name: 'HTTP_HOST',
    group: 'http',
    parse: host,
    whenUnset: 'as `GRPC_HOST`',
    description: 'address the HTTP server listens on, by the same rule',
  },

  // TLS
  {
    name: 'GRPC_TLS_CERT_FILE',
    group: 'tls',
    parse: filePath,
    description:
      'serve TLS with this certificate chain (PEM), with `GRPC_TLS_KEY_FILE` (both or neither); HTTP becomes HTTPS with the same',
  },
  {
    name: 'GRPC_TLS_KEY_FILE',
    group: 'tls',
    parse: filePath,
    description: 'the private key of that certificate (unencrypted PEM), with `GRPC_TLS_CERT_FILE`',
  },
  {
    name: 'GRPC_TLS_CLIENT_CA_FILE',
    group: 'tls',
    parse: filePath,
    description: 'also require a client certificate signed by this CA (mTLS)',
  },

  // Authentication
  {
    name: 'AUTH_MODE',
    group: 'auth',
    parse: oneOf(['jwt', 'none']),
    whenUnset: 'unset (`jwt` when a key set is configured)',
    description:
      '`jwt` requires a key set; `none` serves without authentication on purpose (needed for a non-loopback `GRPC_HOST` without a key set; logs a warning). Unset without a key set: no authentication, loopback only',
  },
  {
    name: 'AUTH_JWKS_FILE',
    group: 'auth',
    parse: filePath,
    description: 'JSON Web Key Set on disk to verify tokens with; re-read when it changes',
  },
  {
    name: 'AUTH_JWKS_URL',
    group: 'auth',
    parse: httpUrl('must be an https:// URL'),
    description:
      "or the identity provider's JWKS URL (`https://`; `http://` for loopback only): cached, fetched again for an unknown key id",
  },
  { name: 'AUTH_ISSUER', group: 'auth', parse: text, description: 'when set, tokens must carry this `iss`' },
  {
    name: 'AUTH_AUDIENCE',
    group: 'auth',
    parse: text,
    description: 'when set, tokens must carry this `aud` (set it: a warning says so otherwise)',
  },

  // Tracing
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    group: 'tracing',
    parse: httpUrl("must be an http:// or https:// URL (the collector's OTLP/HTTP base)"),
    description: "OpenTelemetry collector's OTLP/HTTP base URL (`/v1/traces` is added); unset: no tracing",
  },
  { name: 'OTEL_SERVICE_NAME', group: 'tracing', parse: serviceName, default: 'toolhistory', description: "the traces' `service.name`" },

  // Process
  {
    name: 'SERVICE_ROLES',
    group: 'process',
    parse: listOf(SERVICE_ROLE_NAMES),
    default: 'recorder,grpc',
    description: '`recorder`, `grpc`, or both: run them in separate processes to scale them apart',
  },
  {
    name: 'LOG_LEVEL',
    group: 'process',
    // The message class-validator gave it, kept for operators who know it.
    parse: oneOf(LOG_LEVELS, 'must be one of the following values:'),
    default: 'info',
    description: '`fatal` ... `trace`, `silent`; logs are JSON lines (pino) on stdout',
  },
  {
    name: 'GC_BUSY_CALLS_PER_SECOND',
    group: 'process',
    parse: positiveInt,
    default: '1000',
    description:
      'gRPC calls a second past which the process counts as busy, and V8 collects its heap in shorter, more frequent full collections (`GC_BUSY_HEAP_GROWING_PERCENT`) until five minutes below it',
  },
  {
    name: 'GC_BUSY_HEAP_GROWING_PERCENT',
    group: 'process',
    parse: wholeNumber("0: V8's own, busy or not"),
    default: '50',
    description:
      "while busy, how far V8 lets the heap grow past what its last full collection kept before the next, in percent (V8's own goes up to 300): each call leaves objects only a full collection frees, so its pause, which calls wait behind, grows with the calls since the last ([ADR 035](adr/035-garbage-collection-under-load.md))",
  },
  {
    name: 'GC_CALLS_PER_FULL_COLLECTION',
    group: 'process',
    parse: wholeNumber('0: V8 alone decides'),
    default: '20000',
    description:
      'gRPC calls (counted at the HTTP/2 stream) after which, if V8 has made no full collection meanwhile, the process has it start one, marked beside the program: the strings each call leaves wait for a full collection, and its pause grows with them ([ADR 036](adr/036-full-collections-by-calls.md))',
  },
  {
    name: 'GC_PRETENURING',
    group: 'process',
    parse: boolean,
    default: 'false',
    description:
      "V8's allocation-site pretenuring: objects from places in the code whose objects mostly outlived a young-generation collection are made in the old generation at once; off, a call's objects die young, for less work a call (ADR 035)",
  },
] as const satisfies readonly Setting[];

type Entry = (typeof SETTINGS)[number];
export type SettingName = Entry['name'];
type ValueOf<E> = E extends { readonly parse: Parser<infer T> } ? (E extends { readonly default: string } ? T : T | undefined) : never;

/** Each variable's typed value; undefined only for a variable without default that is unset. */
export type SettingValues = { readonly [K in SettingName]: ValueOf<Extract<Entry, { readonly name: K }>> };

/** The text of each variable the environment sets (trimmed; an empty variable is unset), whether its parser took it or not. */
export type GivenSettings = Readonly<Partial<Record<SettingName, string>>>;

export const ENVIRONMENT_VARIABLE_NAMES: readonly SettingName[] = Object.freeze(SETTINGS.map((s) => s.name));

type DefaultedName = Extract<Entry, { readonly default: string }>['name'];

/** The text each variable with a default has when unset. */
export const CONFIG_DEFAULTS = Object.freeze(
  Object.fromEntries(SETTINGS.flatMap((s: Setting) => (s.default === undefined ? [] : [[s.name, s.default]]))),
) as Readonly<Record<DefaultedName, string>>;
