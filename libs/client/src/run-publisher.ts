// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { laterConsistencyToken } from '../../contract/src/consistency-token';
import { rememberConsistencyToken } from './consistency-tokens';
import type { EventIdentity } from './event-ids';
import type { JsonObject, JsonValue, ModelResponseReceived, RunFailureDetail, TokenUsage, ToolEventType } from './tool-event-types';

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

/**
 * The model's response in one round (ModelResponseReceived), published
 * before the round's calls: its text beside them and the reasoning state
 * the provider handed back, each item as the provider produced it.
 */
export type ModelResponseInput = EventOverrides &
  Pick<ModelResponseReceived, 'roundIndex' | 'provider' | 'model' | 'text' | 'reasoning' | 'callSignatures' | 'callItemIds'>;

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
  private lastToken = '';

  constructor(
    readonly scope: Readonly<RunScope>,
    private readonly publish: Publish,
  ) {}

  /**
   * Where this run's last published event landed ('' before any was
   * published): a read given it answers only once everything this run
   * published is recorded. This process's reads of the conversation send it
   * by themselves (`lastConsistencyToken`); carry it to reads made in
   * another process. Every adapter that records through this run leaves it
   * here.
   */
  get consistencyToken(): string {
    return this.lastToken;
  }

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

  /** The model's response in a round: publish it before the round's calls (the service pairs them in either order). */
  modelResponse(input: ModelResponseInput): Promise<PublishedEvent> {
    const { roundIndex, provider, model, text, reasoning, callSignatures, callItemIds } = input;
    return this.one({
      identity: { type: 'ModelResponseReceived', roundIndex },
      overrides: input,
      fields: {
        roundIndex,
        provider,
        model,
        ...(text === undefined ? {} : { text }),
        ...(reasoning === undefined ? {} : { reasoning }),
        ...(callSignatures === undefined ? {} : { callSignatures }),
        ...(callItemIds === undefined ? {} : { callItemIds }),
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
    if (token) {
      this.lastToken = laterConsistencyToken(this.lastToken || undefined, token);
      rememberConsistencyToken(this.scope, token);
    }
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
