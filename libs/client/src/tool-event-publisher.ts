import { Kafka, type KafkaConfig, logLevel as KafkaLogLevel, Partitioners, type Producer, type RetryOptions } from 'kafkajs';
// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { DEFAULT_MAX_EVENT_BYTES } from '../../contract/src/tool-event.types';
import { tokenOfAck } from './consistency-tokens';
import { checkMaxResultChars, type MaxResultChars } from './payload-truncation';
import { checkPersistOption, type PersistOption } from './persist-hook';
import { prepareEvents } from './prepare-events';
import { type PendingEvent, type PublishedEvent, RunPublisher, type RunScope } from './run-publisher';
import { PublishError } from './tool-history-errors';

export * from './run-publisher';
export { type PayloadLimits, type PreparedEvent, prepareEvents, PUBLISHED_SCHEMA_VERSION } from './prepare-events';

export const DEFAULT_TOOL_EVENTS_TOPIC = 'agent.tool-events';

export interface ToolEventPublisherOptions {
  brokers: string[];
  /** Default `agent.tool-events`. */
  topic?: string;
  clientId?: string;
  ssl?: KafkaConfig['ssl'];
  sasl?: KafkaConfig['sasl'];
  /** kafkajs's own log level; default ERROR. */
  logLevel?: KafkaLogLevel;
  /**
   * How long a send keeps retrying while the broker cannot take it, before
   * it rejects: default 5 retries, backoff from 300 ms to 5 s (some 10 s in
   * all), so a turn fails instead of hanging. A retried event keeps its id,
   * so a retry that did reach the broker is still recorded once.
   */
  retry?: RetryOptions;
  /**
   * The largest event (UTF-8 JSON) to send; default DEFAULT_MAX_EVENT_BYTES
   * (1 MiB), the service's default MAX_EVENT_BYTES. Set it to the service's
   * MAX_EVENT_BYTES when that differs. A call's arguments or a result that
   * would make its event larger are cut to fit, with the truncation marker,
   * and the event says how large they were (`originalBytes`): a big payload
   * does not fail the turn.
   */
  maxEventBytes?: number;
  /**
   * Results longer than this (in characters of a string result's text, or of
   * another result's JSON text) are cut to it, with the truncation marker,
   * before they are sent: one limit, or `{ defaults, tools: { <toolName>: n } }`
   * as the service's policy file states it. A result's tool is the `toolName`
   * given with it, else the tool of the call this RunPublisher published
   * with the same round, sequence and toolCallId. Default: no limit.
   */
  maxResultChars?: MaxResultChars;
  /**
   * Redaction before publishing: a hook that runs in the worker on each
   * call's arguments and each result before they are sent, so what the host
   * does not want kept never reaches the broker. One hook for every tool,
   * `(payload, { kind, toolName }) => ...` (`kind`: 'arguments' or
   * 'result'), or hooks by tool name (tools not named are published as they
   * are). It answers the payload to publish (redacted as it likes),
   * `'metadata'` (no payload: ids, name, times and its size) or `null` (no
   * payload and no size). It runs before the payload limits, which apply to
   * what it answered. A hook that throws fails the publication
   * (PersistHookError) and nothing is sent. A result needs its tool then:
   * the `toolName` given with it, else its call's, published by the same
   * RunPublisher; a result whose tool is unknown is refused.
   */
  persist?: PersistOption;
}

export const DEFAULT_PUBLISH_RETRY: RetryOptions = { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 };

/**
 * Publishes a run's tool events to Kafka, as the service's contract wants
 * them: validated before sending, keyed by conversation (Kafka's murmur2
 * partitioner, the same as the Java client's), idempotent producer with
 * acknowledgement from all in-sync replicas, one request in flight so a
 * conversation's events keep their order.
 */
export class ToolEventPublisher {
  readonly topic: string;
  private readonly producer: Producer;
  private readonly maxEventBytes: number;
  private readonly maxResultChars: MaxResultChars | undefined;
  private readonly persist: PersistOption | undefined;

  constructor(options: ToolEventPublisherOptions) {
    if (!Array.isArray(options.brokers) || options.brokers.length === 0)
      throw new TypeError('brokers: at least one broker address is required');
    const { maxEventBytes = DEFAULT_MAX_EVENT_BYTES } = options;
    if (!(Number.isSafeInteger(maxEventBytes) && maxEventBytes >= 1))
      throw new TypeError(`maxEventBytes: must be a whole number of bytes, 1 or more (got ${String(maxEventBytes)})`);
    checkMaxResultChars(options.maxResultChars);
    checkPersistOption(options.persist);
    // A shallow copy of the hooks by tool: adding a tool to the caller's object later changes nothing here.
    this.persist = typeof options.persist === 'object' ? { ...options.persist } : options.persist;
    this.maxEventBytes = maxEventBytes;
    // A copy: a caller changing its object later does not change what this publisher cuts.
    this.maxResultChars = structuredClone(options.maxResultChars);
    this.topic = options.topic ?? DEFAULT_TOOL_EVENTS_TOPIC;
    const kafka = new Kafka({
      clientId: options.clientId ?? 'toolhistory-publisher',
      brokers: options.brokers,
      ssl: options.ssl,
      sasl: options.sasl,
      logLevel: options.logLevel ?? KafkaLogLevel.ERROR,
    });
    this.producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // kafkajs's idempotent producer would otherwise retry without end (and warns that a bound weakens its
      // exactly-once: here the event ids are what makes a retried send count once).
      retry: options.retry ?? DEFAULT_PUBLISH_RETRY,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  /** A run's publishing methods; nothing is sent until one is called. */
  run(scope: RunScope): RunPublisher {
    for (const field of ['tenantId', 'conversationId', 'channel', 'runId'] as const) {
      if (typeof scope?.[field] !== 'string' || scope[field].length === 0) throw new TypeError(`${field} is required`);
    }
    const { userMessageId } = scope;
    if (userMessageId !== undefined && (typeof userMessageId !== 'string' || userMessageId.length === 0))
      throw new TypeError('userMessageId: must be a non-empty string when given (leave it out when the host has no id for the message)');
    const frozen: RunScope = { ...scope };
    return new RunPublisher(frozen, (events) => this.publish(frozen, events));
  }

  /**
   * Checks every event first (nothing is sent if one is invalid or cannot be
   * made to fit), cutting payloads over the limits, then sends them in one
   * request, in order.
   */
  private async publish(scope: RunScope, events: readonly PendingEvent[]): Promise<PublishedEvent[]> {
    const prepared = prepareEvents(scope, events, {
      maxEventBytes: this.maxEventBytes,
      maxResultChars: this.maxResultChars,
      persist: this.persist,
    });
    if (prepared.length === 0) return [];
    const [ack] = await this.producer
      .send({ topic: this.topic, acks: -1, messages: prepared.map(({ value }) => ({ key: scope.conversationId, value })) })
      .catch((error: unknown) => {
        throw PublishError.fromKafkaError(error);
      });
    // One key, so one partition: the batch's offsets follow the base offset.
    const base = ack.baseOffset === undefined ? undefined : BigInt(ack.baseOffset);
    return prepared.map(({ eventId, type }, index) => {
      const offset = base === undefined ? '' : String(base + BigInt(index));
      // An acknowledgement without an offset (acks=0 never here) names nowhere to wait for.
      return {
        eventId,
        type,
        partition: ack.partition,
        offset,
        consistencyToken: offset === '' ? '' : tokenOfAck(this.topic, ack.partition, offset),
      };
    });
  }
}
