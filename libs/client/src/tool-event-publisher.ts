import { Kafka, type KafkaConfig, logLevel as KafkaLogLevel, Partitioners, type Producer, type RetryOptions } from 'kafkajs';
import { deriveEventId, type EventIdentity } from './event-ids';
import { serializeValidEvent } from './event-validation';
import type { JsonObject, JsonValue, RunFailureDetail, TokenUsage, ToolEventType } from './tool-event-types';

export const DEFAULT_TOOL_EVENTS_TOPIC = 'agent.tool-events';
/** The event version this package publishes. */
export const PUBLISHED_SCHEMA_VERSION = 2;

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
}

export const DEFAULT_PUBLISH_RETRY: RetryOptions = { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 };

/** Which run the events belong to: the envelope every event of it shares. */
export interface RunScope {
  tenantId: string;
  conversationId: string;
  channel: string;
  runId: string;
}

/** Fields every publishing method accepts: both default to what a first publication of the step would use. */
export interface EventOverrides {
  /** The idempotency key; default: derived from the run and the step, so a re-published step is recorded once. */
  eventId?: string;
  /** Default: now. */
  occurredAt?: Date | string;
}

export interface ToolCallInput extends EventOverrides {
  roundIndex: number;
  sequenceIndex: number;
  /** The id the LLM gave the call; may be empty (the service then derives a stable one). */
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
}

export interface ToolResultInput extends EventOverrides {
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  result: JsonValue;
  /** Default false. */
  isError?: boolean;
}

export interface RunCompletionInput extends EventOverrides {
  /** The host's final assistant message of the run. */
  assistantMessageId: string;
  /** `stop` (default) when the model answered after the last round's results; e.g. `tool_limit` when the loop ended right after executing tools. */
  finishReason?: string;
  /** Tokens per service (LLM) call of the run, in call order. */
  usage?: TokenUsage[];
}

export interface RunFailureInput extends EventOverrides {
  error: RunFailureDetail;
}

/** What the broker acknowledged. */
export interface PublishedEvent {
  eventId: string;
  type: ToolEventType;
  partition: number;
  offset: string;
}

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

  constructor(options: ToolEventPublisherOptions) {
    if (!Array.isArray(options.brokers) || options.brokers.length === 0)
      throw new TypeError('brokers: at least one broker address is required');
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
    return new RunPublisher({ ...scope }, (events) => this.publish(scope, events));
  }

  /** Checks every event first (nothing is sent if one is invalid), then sends them in one request, in order. */
  private async publish(scope: RunScope, events: readonly PendingEvent[]): Promise<PublishedEvent[]> {
    const now = new Date();
    const prepared = events.map(({ identity, overrides, fields }) => {
      const eventId = overrides.eventId ?? deriveEventId(scope, identity);
      const occurredAt = overrides.occurredAt ?? now;
      const value = serializeValidEvent({
        eventId,
        type: identity.type,
        schemaVersion: PUBLISHED_SCHEMA_VERSION,
        tenantId: scope.tenantId,
        conversationId: scope.conversationId,
        channel: scope.channel,
        runId: scope.runId,
        occurredAt: occurredAt instanceof Date ? occurredAt.toISOString() : occurredAt,
        ...fields,
      });
      return { eventId, type: identity.type, value };
    });
    if (prepared.length === 0) return [];
    const [ack] = await this.producer.send({
      topic: this.topic,
      acks: -1,
      messages: prepared.map(({ value }) => ({ key: scope.conversationId, value })),
    });
    // One key, so one partition: the batch's offsets follow the base offset.
    const base = ack.baseOffset === undefined ? undefined : BigInt(ack.baseOffset);
    return prepared.map(({ eventId, type }, index) => ({
      eventId,
      type,
      partition: ack.partition,
      offset: base === undefined ? '' : String(base + BigInt(index)),
    }));
  }
}

/** An event of a run before its envelope is added: what a RunPublisher hands to the publisher. */
export interface PendingEvent {
  identity: EventIdentity;
  overrides: EventOverrides;
  fields: Record<string, unknown>;
}

export type Publish = (events: readonly PendingEvent[]) => Promise<PublishedEvent[]>;

/** One run's events. Each method resolves once the broker has the event. */
export class RunPublisher {
  constructor(
    readonly scope: Readonly<RunScope>,
    private readonly publish: Publish,
  ) {}

  toolCall(input: ToolCallInput): Promise<PublishedEvent> {
    return this.one(toolCallEvent(input));
  }

  /** A round's calls in one request: one acknowledgement for all of them. Nothing is sent if one is invalid. */
  toolCalls(inputs: readonly ToolCallInput[]): Promise<PublishedEvent[]> {
    return this.publish(inputs.map(toolCallEvent));
  }

  toolResult(input: ToolResultInput): Promise<PublishedEvent> {
    return this.one(toolResultEvent(input));
  }

  /** Several results in one request: one acknowledgement for all of them. Nothing is sent if one is invalid. */
  toolResults(inputs: readonly ToolResultInput[]): Promise<PublishedEvent[]> {
    return this.publish(inputs.map(toolResultEvent));
  }

  complete(input: RunCompletionInput): Promise<PublishedEvent> {
    return this.one({
      identity: { type: 'RunCompleted' },
      overrides: input,
      fields: {
        assistantMessageId: input.assistantMessageId,
        finishReason: input.finishReason ?? 'stop',
        ...(input.usage === undefined ? {} : { usage: input.usage }),
      },
    });
  }

  fail(input: RunFailureInput): Promise<PublishedEvent> {
    return this.one({
      identity: { type: 'RunFailed' },
      overrides: input,
      fields: { error: { code: input.error?.code, message: input.error?.message } },
    });
  }

  private async one(event: PendingEvent): Promise<PublishedEvent> {
    const [published] = await this.publish([event]);
    return published;
  }
}

function toolCallEvent(input: ToolCallInput): PendingEvent {
  const { roundIndex, sequenceIndex, toolCallId, toolName } = input;
  return {
    identity: { type: 'ToolCallRequested', roundIndex, sequenceIndex, toolCallId },
    overrides: input,
    fields: { roundIndex, sequenceIndex, toolCallId, toolName, arguments: input.arguments },
  };
}

function toolResultEvent(input: ToolResultInput): PendingEvent {
  const { roundIndex, sequenceIndex, toolCallId, result } = input;
  return {
    identity: { type: 'ToolResultReceived', roundIndex, sequenceIndex, toolCallId },
    overrides: input,
    fields: { toolCallId, roundIndex, sequenceIndex, result, isError: input.isError ?? false },
  };
}
