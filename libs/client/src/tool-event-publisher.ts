import { Kafka, type KafkaConfig, logLevel as KafkaLogLevel, Partitioners, type Producer, type RetryOptions } from 'kafkajs';
// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { DEFAULT_MAX_EVENT_BYTES } from '../../contract/src/tool-event.types';
import { deriveEventId, type EventIdentity } from './event-ids';
import { checkMaxResultChars, type MaxResultChars, resultCharLimit, serializeFittedEvent } from './payload-truncation';
import { applyPersistHook, checkPersistOption, hasPersistHooks, type PersistOption, persistHookFor } from './persist-hook';
import { InvalidToolEventError } from './tool-history-errors';
import { rememberConsistencyToken, tokenOfAck } from './consistency-tokens';
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

/** Which run the events belong to: the envelope every event of it shares. */
export interface RunScope {
  tenantId: string;
  conversationId: string;
  channel: string;
  runId: string;
  /**
   * The host's id of the message that started the run (the user's message):
   * every event of the run carries it, and replay places a run that has no
   * final answer (failed, or still running) right after that message.
   */
  userMessageId?: string;
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
  /**
   * The tool that gave the result, for the publisher's per-tool
   * `maxResultChars` and its persist hook (it is not sent: the call names
   * the tool). Default: the tool of the call this RunPublisher published for
   * the same step. Required when the publisher has persist hooks and the
   * call was published elsewhere.
   */
  toolName?: string;
}

/** A call waits for a person's approval before it runs: published after the call, keyed like it. */
export interface ToolApprovalRequestInput extends EventOverrides {
  roundIndex: number;
  sequenceIndex: number;
  /** The call's id; must not be empty (an approval is asked for a call the host can name). */
  toolCallId: string;
  /** Why the call needs approval, as shown to the person. */
  reason?: string;
}

/**
 * The person's answer, with the call's round, sequence and toolCallId. May be
 * published by a later run of the conversation than the call's (the run that
 * resumed after the answer).
 */
export interface ToolApprovalDecisionInput extends EventOverrides {
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  approved: boolean;
  /** The person's reason, if they gave one. */
  reason?: string;
  /** Who decided, as the host names them. */
  decidedBy?: string;
}

export interface RunCompletionInput extends EventOverrides {
  /** The host's final assistant message of the run. */
  assistantMessageId: string;
  /** `stop` (default) when the model answered after the last round's results; e.g. `tool_limit` when the loop ended right after executing tools. */
  finishReason?: string;
  /** Tokens per service (LLM) call of the run, in call order. */
  usage?: TokenUsage[];
  /**
   * The source numbers the final answer cites (`[sourceN]`; citedSourcesFrom
   * reads them from the answer's text); [] when it cites none. Replay then
   * keeps only the cited items of results a `citations` policy rule names.
   * Left out: every result is replayed whole.
   */
  citedSources?: number[];
}

export interface RunFailureInput extends EventOverrides {
  error: RunFailureDetail;
  /** Tokens per service (LLM) call the run made before it failed, in call order, as for complete(). */
  usage?: TokenUsage[];
}

/** What the broker acknowledged. */
export interface PublishedEvent {
  eventId: string;
  type: ToolEventType;
  partition: number;
  offset: string;
  /**
   * Where the event landed, as an opaque, printable string: a read given it
   * (`consistencyToken` of getReplayHistory and the other reads) answers
   * only once the event is recorded. This process's own reads of the
   * conversation pass the last one themselves; carry it to reads made
   * elsewhere (e.g. in the host's message row).
   */
  consistencyToken: string;
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
    const [ack] = await this.producer.send({
      topic: this.topic,
      acks: -1,
      messages: prepared.map(({ value }) => ({ key: scope.conversationId, value })),
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

/** The limits the publisher cuts payloads to, and its persist hooks (see ToolEventPublisherOptions). */
export interface PayloadLimits {
  maxEventBytes: number;
  maxResultChars?: MaxResultChars;
  persist?: PersistOption;
}

/** An event as it goes to the broker. */
export interface PreparedEvent {
  eventId: string;
  type: ToolEventType;
  /** The event's JSON: the message value. */
  value: string;
}

/**
 * What ToolEventPublisher sends for a run's pending events: each with its
 * envelope (derived event id and `now` unless overridden), checked against
 * the contract and cut to the limits, in order, after the persist hooks ran on
 * its payloads. Throws InvalidToolEventError for the first event that is
 * invalid or cannot be made to fit (PersistHookError for a hook that throws),
 * so a batch is sent whole or not at all. For a host that sends the events itself (e.g.
 * through an outbox): a RunPublisher over a Publish function that calls this.
 */
export function prepareEvents(scope: RunScope, events: readonly PendingEvent[], limits: PayloadLimits, now = new Date()): PreparedEvent[] {
  return events.map(({ identity, overrides, fields, toolName }) => {
    const eventId = overrides.eventId ?? deriveEventId(scope, identity);
    const occurredAt = overrides.occurredAt ?? now;
    const event: Record<string, unknown> = {
      eventId,
      type: identity.type,
      schemaVersion: PUBLISHED_SCHEMA_VERSION,
      tenantId: scope.tenantId,
      conversationId: scope.conversationId,
      channel: scope.channel,
      runId: scope.runId,
      occurredAt: occurredAt instanceof Date ? occurredAt.toISOString() : occurredAt,
      ...(scope.userMessageId === undefined ? {} : { userMessageId: scope.userMessageId }),
      ...persistedFields(identity.type, fields, toolName, limits.persist),
    };
    // A withheld result is null: there is no text to cut.
    const maxResultChars =
      identity.type === 'ToolResultReceived' && event.result !== null ? resultCharLimit(limits.maxResultChars, toolName) : undefined;
    return { eventId, type: identity.type, value: serializeFittedEvent(event, { maxEventBytes: limits.maxEventBytes, maxResultChars }) };
  });
}

/**
 * An event's fields with its payload as the persist hook answered, and
 * `producerRedacted` with the producer's choice whenever a hook ran on it
 * (whatever it answered: the event says the producer's rules applied).
 */
function persistedFields(
  type: ToolEventType,
  fields: Record<string, unknown>,
  toolName: string | undefined,
  persist: PersistOption | undefined,
): Record<string, unknown> {
  const kind = type === 'ToolCallRequested' ? 'arguments' : type === 'ToolResultReceived' ? 'result' : undefined;
  if (kind === undefined || !hasPersistHooks(persist)) return fields;
  // A call without a valid toolName is refused by the contract check that follows.
  if (toolName === undefined && kind === 'arguments') return fields;
  if (toolName === undefined) {
    throw new InvalidToolEventError([
      'toolName is required with a result when the publisher has persist hooks (give it, or publish the call with the same RunPublisher)',
    ]);
  }
  const hook = persistHookFor(persist, toolName);
  if (hook === undefined) return fields;
  const kept = applyPersistHook(hook, fields[kind] as JsonValue, { kind, toolName });
  return {
    ...fields,
    [kind]: kept.payload,
    ...(kept.originalBytes === undefined ? {} : { originalBytes: kept.originalBytes }),
    producerRedacted: true,
    redaction: { persist: kept.persist },
  };
}

/** An event of a run before its envelope is added: what a RunPublisher hands to the publisher. */
export interface PendingEvent {
  identity: EventIdentity;
  overrides: EventOverrides;
  fields: Record<string, unknown>;
  /** A call's or a result's tool, when known: picks the tool's `maxResultChars` and persist hook. Not sent on a result. */
  toolName?: string;
}

export type Publish = (events: readonly PendingEvent[]) => Promise<PublishedEvent[]>;

/** One run's events. Each method resolves once the broker has the event. */
export class RunPublisher {
  /** The tool of each call published here, by step: a result's tool for the per-tool result limit. */
  private readonly toolNames = new Map<string, string>();

  constructor(
    readonly scope: Readonly<RunScope>,
    private readonly publish: Publish,
  ) {}

  toolCall(input: ToolCallInput): Promise<PublishedEvent> {
    return this.one(this.toolCallEvent(input));
  }

  /** A round's calls in one request: one acknowledgement for all of them. Nothing is sent if one is invalid. */
  toolCalls(inputs: readonly ToolCallInput[]): Promise<PublishedEvent[]> {
    return this.sent(inputs.map((input) => this.toolCallEvent(input)));
  }

  toolResult(input: ToolResultInput): Promise<PublishedEvent> {
    return this.one(this.toolResultEvent(input));
  }

  /** Several results in one request: one acknowledgement for all of them. Nothing is sent if one is invalid. */
  toolResults(inputs: readonly ToolResultInput[]): Promise<PublishedEvent[]> {
    return this.sent(inputs.map((input) => this.toolResultEvent(input)));
  }

  /** The call waits for a person's approval (publish the call first). */
  approvalRequested(input: ToolApprovalRequestInput): Promise<PublishedEvent> {
    const { roundIndex, sequenceIndex, toolCallId } = input;
    return this.one({
      identity: { type: 'ToolApprovalRequested', roundIndex, sequenceIndex, toolCallId },
      overrides: input,
      fields: { toolCallId, roundIndex, sequenceIndex, ...(input.reason === undefined ? {} : { reason: input.reason }) },
    });
  }

  /** The person's answer to the call of that round, sequence and toolCallId; this run may be a later one than the call's. */
  approvalDecided(input: ToolApprovalDecisionInput): Promise<PublishedEvent> {
    const { roundIndex, sequenceIndex, toolCallId, approved } = input;
    return this.one({
      identity: { type: 'ToolApprovalDecided', roundIndex, sequenceIndex, toolCallId },
      overrides: input,
      fields: {
        toolCallId,
        roundIndex,
        sequenceIndex,
        approved,
        ...(input.reason === undefined ? {} : { reason: input.reason }),
        ...(input.decidedBy === undefined ? {} : { decidedBy: input.decidedBy }),
      },
    });
  }

  complete(input: RunCompletionInput): Promise<PublishedEvent> {
    return this.one({
      identity: { type: 'RunCompleted' },
      overrides: input,
      fields: {
        assistantMessageId: input.assistantMessageId,
        finishReason: input.finishReason ?? 'stop',
        ...(input.usage === undefined ? {} : { usage: input.usage }),
        ...(input.citedSources === undefined ? {} : { citedSources: input.citedSources }),
      },
    });
  }

  fail(input: RunFailureInput): Promise<PublishedEvent> {
    return this.one({
      identity: { type: 'RunFailed' },
      overrides: input,
      fields: {
        error: { code: input.error?.code, message: input.error?.message },
        ...(input.usage === undefined ? {} : { usage: input.usage }),
      },
    });
  }

  private async one(event: PendingEvent): Promise<PublishedEvent> {
    const [published] = await this.sent([event]);
    return published;
  }

  /** Publishes, and remembers the last token for this process's own reads of the conversation. */
  private async sent(events: readonly PendingEvent[]): Promise<PublishedEvent[]> {
    const published = await this.publish(events);
    const token = published.at(-1)?.consistencyToken;
    if (token) rememberConsistencyToken(this.scope, token);
    return published;
  }

  private toolCallEvent(input: ToolCallInput): PendingEvent {
    const { roundIndex, sequenceIndex, toolCallId, toolName } = input;
    if (typeof toolName === 'string') this.toolNames.set(stepKey(roundIndex, sequenceIndex, toolCallId), toolName);
    return {
      identity: { type: 'ToolCallRequested', roundIndex, sequenceIndex, toolCallId },
      overrides: input,
      fields: { roundIndex, sequenceIndex, toolCallId, toolName, arguments: input.arguments },
      toolName: typeof toolName === 'string' ? toolName : undefined,
    };
  }

  private toolResultEvent(input: ToolResultInput): PendingEvent {
    const { roundIndex, sequenceIndex, toolCallId, result } = input;
    return {
      identity: { type: 'ToolResultReceived', roundIndex, sequenceIndex, toolCallId },
      overrides: input,
      fields: { toolCallId, roundIndex, sequenceIndex, result, isError: input.isError ?? false },
      toolName: input.toolName ?? this.toolNames.get(stepKey(roundIndex, sequenceIndex, toolCallId)),
    };
  }
}

/** A call's step as a map key: a JSON array keeps the parts apart whatever they hold. */
function stepKey(roundIndex: number, sequenceIndex: number, toolCallId: string): string {
  return JSON.stringify([roundIndex, sequenceIndex, toolCallId]);
}
