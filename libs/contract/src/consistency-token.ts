/**
 * Consistency tokens: where a publisher's events landed, handed to reads so
 * they answer only once those events are recorded (read-your-writes).
 * Callers treat a token as opaque text; its grammar is fixed here, shared by
 * the service, the TypeScript client and (by the same grammar and the shared
 * test vectors) the Python client, and only ever extended with a new version
 * prefix, so a token written by any client version stays readable.
 *
 *   ct1:k:<topic>:<partition>:<offset>   a Kafka message: recorded once the recorder is past it
 *   ct1:p:<position>                     a global position of the event store (what the service itself wrote, e.g. a fork)
 *
 * No imports: the client package bundles this file.
 */

export type ConsistencyToken =
  /** The message at `offset` of the topic's partition. */
  | { kind: 'kafka'; topic: string; partition: number; offset: bigint }
  /** The event at this global position of the event store. */
  | { kind: 'position'; position: bigint };

export const CONSISTENCY_TOKEN_PREFIX = 'ct1';
/** Kafka's own rule for topic names. */
const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = 9_223_372_036_854_775_807n;
const INT32_MAX = 2_147_483_647;
/** Longer text is no token of any version, and is refused before it is split. */
export const MAX_CONSISTENCY_TOKEN_LENGTH = 300;

export function formatConsistencyToken(token: ConsistencyToken): string {
  return token.kind === 'kafka'
    ? `${CONSISTENCY_TOKEN_PREFIX}:k:${token.topic}:${token.partition}:${token.offset}`
    : `${CONSISTENCY_TOKEN_PREFIX}:p:${token.position}`;
}

/** The token of a Kafka message as a producer's acknowledgement names it (offsets travel as decimal text). */
export function kafkaConsistencyToken(topic: string, partition: number, offset: string | bigint): string {
  return formatConsistencyToken({ kind: 'kafka', topic, partition, offset: BigInt(offset) });
}

/** The token, or the reason the text is none (for an INVALID_ARGUMENT that names it). */
export function parseConsistencyToken(text: string): ConsistencyToken | { invalid: string } {
  if (text.length > MAX_CONSISTENCY_TOKEN_LENGTH) return { invalid: `longer than ${MAX_CONSISTENCY_TOKEN_LENGTH} characters` };
  const parts = text.split(':');
  if (parts[0] !== CONSISTENCY_TOKEN_PREFIX) return { invalid: `it does not start with "${CONSISTENCY_TOKEN_PREFIX}:"` };
  if (parts[1] === 'k' && parts.length === 5) {
    const [, , topic, partition, offset] = parts;
    if (!TOPIC.test(topic)) return { invalid: 'its topic is not a Kafka topic name' };
    if (!DECIMAL.test(partition) || Number(partition) > INT32_MAX) return { invalid: 'its partition is not a partition number' };
    if (!DECIMAL.test(offset) || BigInt(offset) > INT64_MAX) return { invalid: 'its offset is not an offset' };
    return { kind: 'kafka', topic, partition: Number(partition), offset: BigInt(offset) };
  }
  if (parts[1] === 'p' && parts.length === 3) {
    const position = parts[2];
    if (!DECIMAL.test(position) || BigInt(position) > INT64_MAX || position === '0') return { invalid: 'its position is not a position' };
    return { kind: 'position', position: BigInt(position) };
  }
  return { invalid: 'its kind is not one this service knows' };
}

export function isConsistencyToken(parsed: ConsistencyToken | { invalid: string }): parsed is ConsistencyToken {
  return !('invalid' in parsed);
}

/**
 * The later of two tokens of one conversation: on the same partition the
 * higher offset (or position); otherwise the one given last (`next`), as a
 * conversation's later events went there.
 */
export function laterConsistencyToken(current: string | undefined, next: string): string {
  if (current === undefined) return next;
  const a = parseConsistencyToken(current);
  const b = parseConsistencyToken(next);
  if (!isConsistencyToken(a) || !isConsistencyToken(b)) return next;
  if (a.kind === 'kafka' && b.kind === 'kafka' && a.topic === b.topic && a.partition === b.partition)
    return a.offset > b.offset ? current : next;
  if (a.kind === 'position' && b.kind === 'position') return a.position > b.position ? current : next;
  return next;
}
