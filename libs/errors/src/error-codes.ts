/**
 * Every failure that crosses a boundary has one of these codes, and the code
 * alone says whether retrying the same work can succeed: the one place that
 * decides it (as kafkajs's protocol/error.js does for Kafka's codes). Edges
 * map codes, never flags: the recorder retries or dead-letters, gRPC and
 * HTTP pick a status, the CLI an exit code.
 */
export const ERROR_CODES = {
  // What an event or a request is: the same input fails the same way again.
  INVALID_EVENT: { retriable: false, meaning: 'the event breaks the contract' },
  NOT_JSON: { retriable: false, meaning: 'the message is not JSON' },
  OVERSIZE: { retriable: false, meaning: 'the message is larger than the limit' },
  UNKNOWN_EVENT_TYPE: { retriable: false, meaning: 'the event type is not one of the contract' },
  UNSUPPORTED_SCHEMA_VERSION: { retriable: false, meaning: 'the schema version is not one this service reads' },
  UNSTORABLE_EVENT: { retriable: false, meaning: 'the store refuses the data itself (bad text, too large a value)' },
  INVALID_ARGUMENT: { retriable: false, meaning: 'the request is malformed' },
  INVALID_CONFIG: { retriable: false, meaning: 'a setting is wrong; an operator must fix it' },
  NOT_FOUND: { retriable: false, meaning: 'what was asked for does not exist' },
  UNAUTHENTICATED: { retriable: false, meaning: 'the caller could not be verified' },
  PERMISSION_DENIED: { retriable: false, meaning: 'the caller may not do this' },
  CONCURRENCY_CONFLICT: { retriable: false, meaning: 'a stream is not at the revision the writer expected' },
  ALREADY_EXISTS: { retriable: false, meaning: 'what the request would create exists already, and differs' },
  NOT_SUPPORTED: { retriable: false, meaning: 'this deployment cannot do that (a choice of its configuration)' },
  STREAM_ERASED: { retriable: false, meaning: 'the stream was erased; nothing may be appended to it again' },
  INTERNAL: { retriable: false, meaning: "this service's own fault (a bug)" },
  // What the world is now: the same work can succeed later.
  STORAGE_UNAVAILABLE: { retriable: true, meaning: 'the store does not answer (connection refused, reset, timed out)' },
  STORAGE_FAILED: {
    retriable: true,
    meaning: 'the store failed in a way not understood here; retried, so events wait rather than being lost',
  },
  CONTENTION: { retriable: true, meaning: 'others kept changing what this write depends on' },
  BROKER_UNAVAILABLE: { retriable: true, meaning: 'Kafka does not answer' },
  BROKER_REJECTED: { retriable: false, meaning: 'Kafka refused the message itself (too large, say)' },
  RESOURCE_EXHAUSTED: { retriable: true, meaning: 'a limit is reached; retry after a backoff' },
  NOT_YET_RECORDED: { retriable: true, meaning: "the events a read's consistency token names were not recorded within its deadline" },
  DEADLINE_EXCEEDED: { retriable: true, meaning: "the work did not finish within the caller's deadline" },
  AUTH_UNAVAILABLE: { retriable: true, meaning: 'the keys to verify callers could not be had' },
  KEY_UNAVAILABLE: {
    retriable: true,
    meaning: 'a key to seal or open payloads could not be had (key store or keyring); the work waits rather than losing data',
  },
  SHUTTING_DOWN: { retriable: true, meaning: 'this instance is stopping; another one serves the retry' },
} as const satisfies Record<string, { retriable: boolean; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes by name, for code that reads better as `ErrorCode.NotFound`. */
export const ErrorCode = {
  InvalidEvent: 'INVALID_EVENT',
  NotJson: 'NOT_JSON',
  Oversize: 'OVERSIZE',
  UnknownEventType: 'UNKNOWN_EVENT_TYPE',
  UnsupportedSchemaVersion: 'UNSUPPORTED_SCHEMA_VERSION',
  UnstorableEvent: 'UNSTORABLE_EVENT',
  InvalidArgument: 'INVALID_ARGUMENT',
  InvalidConfig: 'INVALID_CONFIG',
  NotFound: 'NOT_FOUND',
  Unauthenticated: 'UNAUTHENTICATED',
  PermissionDenied: 'PERMISSION_DENIED',
  ConcurrencyConflict: 'CONCURRENCY_CONFLICT',
  AlreadyExists: 'ALREADY_EXISTS',
  NotSupported: 'NOT_SUPPORTED',
  StreamErased: 'STREAM_ERASED',
  Internal: 'INTERNAL',
  StorageUnavailable: 'STORAGE_UNAVAILABLE',
  StorageFailed: 'STORAGE_FAILED',
  Contention: 'CONTENTION',
  BrokerUnavailable: 'BROKER_UNAVAILABLE',
  BrokerRejected: 'BROKER_REJECTED',
  ResourceExhausted: 'RESOURCE_EXHAUSTED',
  NotYetRecorded: 'NOT_YET_RECORDED',
  DeadlineExceeded: 'DEADLINE_EXCEEDED',
  AuthUnavailable: 'AUTH_UNAVAILABLE',
  KeyUnavailable: 'KEY_UNAVAILABLE',
  ShuttingDown: 'SHUTTING_DOWN',
} as const satisfies Record<string, ErrorCode>;

/** Whether retrying the same work can succeed, by the code's classification. */
export function isRetriable(code: ErrorCode): boolean {
  return ERROR_CODES[code].retriable;
}
