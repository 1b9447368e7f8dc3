import { randomUUID } from 'node:crypto';
import type { AgentInputItem, RunContext, Session } from '@openai/agents';
import { ApprovalStatus } from '../generated/toolhistory/v1/toolhistory';
import { RunRecording } from '../recording/run-recording';
import type { RecordedCall, RecordedResponse, RecordedResult } from '../recording/recorded-run';
import type { ReplayHistory, ReplayedTurn } from '../replay-response';
import type { RunPublisher } from '../run-publisher';
import { spliceHistory } from '../splice-history';
import type { ToolHistoryClient } from '../tool-history-client';
import { roundResponseOf } from './agents-run-mapper';
import { toAgentInputItems } from './agents-history-input';
import { isSdkErrorText } from './agents-tool-errors';
import {
  callsFollow,
  isMessageOf,
  lastUserMessageId,
  messageIdOf,
  messageText,
  outputText,
  parseArguments,
  replayedKey,
  roundsOf,
  type SessionItem,
  withId,
  withoutId,
} from './session-items';

/** Tells whether the text the SDK sent the model for a call is a failure. */
export type SessionToolErrorTest = (callId: string, text: string | undefined) => boolean;

export interface ToolHistorySessionOptions {
  /** A ToolEventPublisher (anything with its run()). */
  publisher: {
    run(scope: { tenantId: string; conversationId: string; channel: string; runId: string; userMessageId?: string }): RunPublisher;
  };
  /** The client the replay is read with. */
  client: Pick<ToolHistoryClient, 'getReplayHistory' | 'eraseConversation'>;
  tenantId: string;
  channel: string;
  /** Default: the inner session's id. */
  conversationId?: string;
  /** Default: the SDK's own error texts (its default errorFunction and timeout). */
  isToolError?: SessionToolErrorTest;
  /**
   * The model the agent calls: recorded with a round's reasoning items and
   * its calls' `fc_` item ids, and asked for by the replay, which then
   * leaves out reasoning recorded for another model. Default: reasoning is
   * recorded for the model `unspecified`, and the replay gives any OpenAI
   * model's back.
   */
  model?: string;
  /**
   * The provider a round's reasoning items (and the text said beside its
   * calls) are recorded through: `openai` (default) for the SDK's OpenAI
   * models; name the provider whose own items the agent's model gives, or
   * `null` for a model whose provider cannot be told (an AI SDK or LiteLLM
   * model), which then records no reasoning rather than a wrong provider's,
   * and keeps the text beside calls in `inner`.
   */
  provider?: string | null;
}

/** The model a round's reasoning is recorded for when the session names none. */
const UNSPECIFIED_MODEL = 'unspecified';

const isSdkError: SessionToolErrorTest = (_callId, text) => isSdkErrorText(text);

interface OpenRun {
  recording: RunRecording;
  userMessageId: string | undefined;
  /** Calls that stopped the run for a person's approval, by call id, until their output comes. */
  awaiting: Map<string, RecordedCall>;
}

interface Placed {
  item: AgentInputItem;
  inner: boolean;
  messageId?: string;
}

/**
 * The SDK's Session that keeps the tool calls in toolhistory and everything
 * else in `inner`: addItems records function calls and their results
 * through the recording core (a run per user message, ended by the answer
 * that follows its calls; a call left without a result stops it for a
 * person's approval, and the result a RunState resume brings is recorded
 * with the person's answer), with the reasoning items saved beside a
 * round's calls, and adds every other item to `inner` with an id
 * (MESSAGE_ID_KEY). getItems returns `inner`'s items with the replayed calls
 * where the model saw them, as the service replays them (its rules and the
 * host's branch: the ids of `inner`'s items); a failed call's output comes
 * back as the SDK sent it. popItem removes the last item of that view (one
 * per call; a replayed item from this object's view only); clearSession clears `inner`, and with `{ erase: true }` erases
 * the conversation's recorded calls (else they stay for audit, off every
 * later branch).
 */
export class ToolHistorySession implements Session {
  readonly acceptsRunContext = true as const;
  private conversationId: string | undefined;
  private run: OpenRun | undefined;
  private userMessageId: string | undefined;
  private readonly hidden = new Set<string>();
  private readonly provider: string | null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly inner: Session,
    private readonly options: ToolHistorySessionOptions,
  ) {
    if (!options.tenantId || !options.channel) throw new TypeError('ToolHistorySession needs a non-empty tenantId and channel');
    this.conversationId = options.conversationId || undefined;
    this.provider = options.provider === undefined ? 'openai' : options.provider || null;
  }

  getSessionId(): Promise<string> {
    return this.inner.getSessionId();
  }

  /** The latest `limit` items (all without it), oldest first: `inner`'s with the replayed calls in place. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    // The latest `limit` of the view hold at most `limit` of inner's items, its latest: only those are read.
    const items = (await this.view(limit)).map((placed) => placed.item);
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(Math.max(0, items.length - limit)) : [];
  }

  /** Records the function calls and their results, and adds every other item to `inner`. */
  addItems(items: AgentInputItem[], runContext?: RunContext<unknown>): Promise<void> {
    return this.serially(() => this.add(items, runContext));
  }

  /** Removes and returns the last item of the view (undefined when it is empty). */
  popItem(): Promise<AgentInputItem | undefined> {
    return this.serially(async () => {
      const view = await this.view();
      const last = view.at(-1);
      if (last === undefined) return undefined;
      if (!last.inner) {
        this.hidden.add(replayedKey(last.item));
        return last.item;
      }
      const popped = await this.inner.popItem();
      return popped === undefined ? undefined : withoutId(popped);
    });
  }

  /** Clears `inner` and this session's replay; `{ erase: true }` also erases the recorded calls (EraseConversation). */
  clearSession(options: { erase?: boolean } = {}): Promise<void> {
    return this.serially(async () => {
      await this.inner.clearSession();
      await this.endRun({ stoppedForApproval: this.awaitingApproval() });
      this.userMessageId = undefined;
      this.hidden.clear();
      if (options.erase === true) {
        await this.options.client.eraseConversation({ tenantId: this.options.tenantId, conversationId: await this.conversation() });
      }
    });
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The conversation the calls are recorded in: the option's, else the inner session's id. */
  async conversation(): Promise<string> {
    this.conversationId ??= await this.inner.getSessionId();
    return this.conversationId;
  }

  private async add(items: AgentInputItem[], runContext: RunContext<unknown> | undefined): Promise<void> {
    const conversationId = await this.conversation();
    const own: AgentInputItem[] = [];
    const tools: SessionItem[] = [];
    let answerId: string | undefined;
    const asks = items.some((item) => item.type === 'function_call');
    for (const [at, item] of (items as SessionItem[]).entries()) {
      // A reasoning item goes with the round of calls it came with (replayed right before them, in its turn); one before an answer
      // stays in inner. So does the text the model said beside its calls, recorded with its round and replayed in its place,
      // between the rounds: in inner it would come before every round of the run.
      if (
        item.type === 'function_call' ||
        item.type === 'function_call_result' ||
        (asks && item.type === 'reasoning') ||
        (this.provider !== null && isMessageOf(item, 'assistant') && callsFollow(items as SessionItem[], at))
      ) {
        tools.push(item);
        // The answer is an assistant message no call follows (one before calls is the model's text beside them).
        if (item.type === 'function_call') answerId = undefined;
        continue;
      }
      const messageId = randomUUID();
      own.push(withId(item, messageId));
      if (isMessageOf(item, 'user')) {
        // A run that ended without an answer (its turn limit, an approval not given) is closed by the next question,
        // which stands for its answer: its calls are replayed right before it.
        await this.endRun({ assistantMessageId: messageId, stoppedForApproval: this.awaitingApproval() });
        this.userMessageId = messageId;
      } else if (isMessageOf(item, 'assistant')) {
        answerId = messageId;
      }
    }
    for (const round of roundsOf(tools)) own.push(...(await this.record(conversationId, round, runContext)));
    if (own.length > 0) await this.inner.addItems(own);
    if (answerId !== undefined) await this.endRun({ assistantMessageId: answerId, endedAfterTools: false });
  }

  /** One batch the SDK saves after a model response: its calls (a round), then the results it has so far. Returns the results of calls nobody waits for. */
  private async record(
    conversationId: string,
    items: SessionItem[],
    runContext: RunContext<unknown> | undefined,
  ): Promise<AgentInputItem[]> {
    const asked = items.filter((item) => item.type === 'function_call') as Array<
      SessionItem & { callId: string; name: string; arguments: string }
    >;
    const outputs = items.filter((item) => item.type === 'function_call_result') as Array<SessionItem & { callId: string }>;
    const published: Array<Promise<unknown>> = [];
    if (asked.length > 0) {
      const run = this.run ?? this.startRun(conversationId, this.userMessageId);
      const model = this.options.model || UNSPECIFIED_MODEL;
      const text = messageText(items);
      const reasoning = this.reasoningOf(items, model, text);
      const round = run.recording.response({
        calls: asked.map((call) => ({ toolCallId: call.callId, toolName: call.name, arguments: parseArguments(call.arguments) })),
        ...(reasoning === undefined ? {} : { reasoning }),
        ...(text === '' ? {} : { text }),
      });
      if (round !== undefined) published.push(run.recording.publishCalls(round.calls));
    }
    const results: RecordedResult[] = [];
    const unknown: AgentInputItem[] = [];
    for (const output of outputs) {
      const run = this.run ?? (await this.resumedRun(conversationId, output.callId));
      const call = run?.recording.calls.open(output.callId);
      if (run === undefined || call === undefined) {
        unknown.push(withId(output, randomUUID()));
        continue;
      }
      run.recording.calls.answer(call);
      const text = outputText(output);
      let approved = true;
      if (run.awaiting.delete(output.callId)) {
        approved = runContext?.isToolApproved({ toolName: call.toolName, callId: call.toolCallId }) !== false;
        const decision = run.recording.publishDecision({ ...call, approved, ...(approved || !text ? {} : { reason: text }) });
        if (decision !== undefined) published.push(decision);
      }
      if (approved) results.push({ ...call, result: text ?? '', isError: (this.options.isToolError ?? isSdkError)(call.toolCallId, text) });
    }
    if (results.length > 0 && this.run !== undefined) published.push(this.run.recording.publishResults(results));
    if (this.run !== undefined) {
      const answered = new Set(outputs.map((output) => output.callId));
      for (const { callId } of asked) {
        const call = this.run.recording.calls.open(callId);
        if (answered.has(callId) || call === undefined) continue;
        this.run.awaiting.set(callId, call);
        const request = this.run.recording.publishApprovalRequest(call);
        if (request !== undefined) published.push(request);
      }
    }
    // Each publication acknowledged before the SDK goes on: the next getItems includes it (read-your-writes).
    await Promise.all(published);
    return unknown;
  }

  /** A round's reasoning as recorded: none for an unknown provider; the provider and model alone carry text said without reasoning items. */
  private reasoningOf(items: SessionItem[], model: string, text: string): RecordedResponse['reasoning'] | undefined {
    const provider = this.provider;
    if (provider === null) return undefined;
    return roundResponseOf(items, model, provider)?.reasoning ?? (text === '' ? undefined : { provider, model });
  }

  private startRun(conversationId: string, userMessageId: string | undefined, runId = `run-${randomUUID()}`, firstRoundIndex = 0): OpenRun {
    const publisher = this.options.publisher.run({
      tenantId: this.options.tenantId,
      conversationId,
      channel: this.options.channel,
      runId,
      ...(userMessageId === undefined ? {} : { userMessageId }),
    });
    this.run = { recording: new RunRecording(publisher, { firstRoundIndex }), userMessageId, awaiting: new Map() };
    return this.run;
  }

  /** The run that asked for approval of `callId` elsewhere (a RunState resumed by another process), going on here. */
  private async resumedRun(conversationId: string, callId: string): Promise<OpenRun | undefined> {
    const own = (await this.inner.getItems()) as SessionItem[];
    const history = await this.replay(own);
    const pending = history.pendingApprovals.find((p) => p.toolCallId === callId);
    if (pending === undefined) return undefined;
    const turn = history.turns.find((t) => t.runId === pending.runId);
    const rounds = turn?.rounds.map((r) => r.roundIndex) ?? [];
    const userMessageId = turn?.afterMessageId || lastUserMessageId(own);
    const run = this.startRun(conversationId, userMessageId, pending.runId, Math.max(pending.roundIndex, ...rounds) + 1);
    const call: RecordedCall = {
      roundIndex: pending.roundIndex,
      sequenceIndex: pending.sequenceIndex,
      toolCallId: pending.toolCallId,
      toolName: pending.toolName,
      arguments: parseArguments(pending.argumentsJson),
    };
    run.recording.calls.addEarlier(call);
    run.awaiting.set(callId, call);
    return run;
  }

  private awaitingApproval(): boolean {
    return this.run !== undefined && this.run.awaiting.size > 0;
  }

  private async endRun(end: Parameters<RunRecording['complete']>[0] & object): Promise<void> {
    const run = this.run;
    this.run = undefined;
    if (run !== undefined) await run.recording.complete(end);
  }

  private async view(limit?: number): Promise<Placed[]> {
    const own = (await this.inner.getItems(limit)) as SessionItem[];
    if (own.length === 0) return [];
    const history = await this.replay(own);
    const placed: Placed[] = own.map((item) => ({ item: withoutId(item), inner: true, messageId: messageIdOf(item) }));
    const turns = history.turns.map((turn) => ({
      assistantMessageId: turn.assistantMessageId,
      afterMessageId: turn.afterMessageId,
      // Its rounds as the replay gives them for the session's model: reasoning items right before their calls (with their fc_ ids), calls, outputs.
      messages: toAgentInputItems(outputsAsSent(turn)).map((item): Placed => ({ item, inner: false })),
    }));
    return spliceHistory(placed, turns, (entry) => entry.messageId).filter(
      (entry) => entry.inner || !this.hidden.has(replayedKey(entry.item)),
    );
  }

  private async replay(own: readonly SessionItem[]): Promise<ReplayHistory<unknown>> {
    return this.options.client.getReplayHistory({
      tenantId: this.options.tenantId,
      conversationId: await this.conversation(),
      format: 'openai-responses',
      channel: this.options.channel,
      branchMessageIds: own.flatMap((item) => messageIdOf(item) ?? []),
      ...(this.options.model ? { model: this.options.model } : {}),
    });
  }
}

/**
 * The turn's items, a failed call's output as the SDK sent it (the format
 * marks a failure `[error] `; the SDK's own text already says so): the
 * recorded text, unless the service replaced it (an expiry, an
 * invalidation, an interrupted side effect or a denial say why).
 */
function outputsAsSent(turn: ReplayedTurn<unknown>): unknown[] {
  const failed = new Map<string, string>();
  for (const round of turn.rounds)
    for (const call of round.calls)
      if (
        call.isError &&
        !call.expired &&
        !call.invalidatedBy &&
        !call.interrupted &&
        call.approval !== ApprovalStatus.APPROVAL_STATUS_DENIED
      )
        failed.set(call.toolCallId, call.result);
  return turn.messages.map((item) => {
    const output = item as { type?: unknown; call_id?: unknown };
    return output.type === 'function_call_output' && typeof output.call_id === 'string' && failed.has(output.call_id)
      ? { ...output, output: failed.get(output.call_id) }
      : item;
  });
}
