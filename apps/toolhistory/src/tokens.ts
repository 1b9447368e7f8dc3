/** Injection tokens for values that are not classes. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
export const PG_POOL = Symbol('PG_POOL');
/** The broker, through the messaging library (no client types in the app). */
export const MESSAGING = Symbol('MESSAGING');
export const RECORDING_STORE = Symbol('RECORDING_STORE');
export const REPLAY_POLICY = Symbol('REPLAY_POLICY');
export const REDACTION_POLICY = Symbol('REDACTION_POLICY');
export const HEALTH = Symbol('HEALTH');
/** Admission control of reads (the gRPC edge's, shared with the watch snapshots and the readiness probe). */
export const ADMISSION = Symbol('ADMISSION');
export const GET_REPLAY_HISTORY = Symbol('GET_REPLAY_HISTORY');
/** The replay use case with its cache and request limit, and their figures. */
export const REPLAY_READING = Symbol('REPLAY_READING');
export const ERASE_CONVERSATION = Symbol('ERASE_CONVERSATION');
export const FORK_CONVERSATION = Symbol('FORK_CONVERSATION');
export const AUDIT_READER = Symbol('AUDIT_READER');
export const LIST_TOOL_INVOCATIONS = Symbol('LIST_TOOL_INVOCATIONS');
export const GET_USAGE = Symbol('GET_USAGE');
export const SEARCH_TOOL_HISTORY = Symbol('SEARCH_TOOL_HISTORY');
export const SUBSCRIBE_TOOL_EVENTS = Symbol('SUBSCRIBE_TOOL_EVENTS');
export const WATCH_CONVERSATION = Symbol('WATCH_CONVERSATION');
export const CONVERSATION_CHANGE_HUB = Symbol('CONVERSATION_CHANGE_HUB');
export const WATCH_CHANGES = Symbol('WATCH_CHANGES');
export const EVENT_STORE = Symbol('EVENT_STORE');
export const APPEND_LISTENER = Symbol('APPEND_LISTENER');
export const CALLER_AUTHENTICATOR = Symbol('CALLER_AUTHENTICATOR');
export const OPEN_SUBSCRIPTIONS = Symbol('OPEN_SUBSCRIPTIONS');
/** The gRPC server's own pool: audit and replay load cannot take the recorder's connections. */
export const GRPC_PG_POOL = Symbol('GRPC_PG_POOL');
/** One connection of the health check's own: its SELECT 1 never waits behind replay or audit reads. */
export const HEALTH_PG_POOL = Symbol('HEALTH_PG_POOL');
/** The event store as the gRPC server reads it (subscriptions), on the gRPC pool. */
export const GRPC_EVENT_STORE = Symbol('GRPC_EVENT_STORE');
export const QUERY_CANCELLER = Symbol('QUERY_CANCELLER');
/** The read model's change feed that the gRPC role's replay cache follows. */
export const CONVERSATION_CHANGES = Symbol('CONVERSATION_CHANGES');
/** Read-your-writes: waits for a read's consistency token (consistency/await-recorded.ts). */
export const AWAIT_RECORDED = Symbol('AWAIT_RECORDED');
export const METRICS = Symbol('METRICS');
/** The audit console's use cases that no RPC shares. */
export const CONVERSATION_TIMELINE = Symbol('CONVERSATION_TIMELINE');
export const LIST_DEAD_LETTERS = Symbol('LIST_DEAD_LETTERS');
/** Encryption at rest: the vault, the key store and the keyring (encryption/open-encryption.ts); null when off. */
export const ENCRYPTION = Symbol('ENCRYPTION');
export const RETENTION_POLICY = Symbol('RETENTION_POLICY');
/** The event store as stored, payloads left sealed: for readers that need only ids (the search projections). */
export const STORED_EVENT_STORE = Symbol('STORED_EVENT_STORE');
/** The PostgreSQL event store's events, keys only (what the search projections follow); null with EventStoreDB. */
export const EVENT_KEY_FEED = Symbol('EVENT_KEY_FEED');
