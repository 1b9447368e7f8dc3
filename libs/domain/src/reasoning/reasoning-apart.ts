/**
 * A round's reasoning state (reasoning items, call signatures, item ids)
 * rests apart from its event, and only as long as the policy allows
 * (docs/adr/027-reasoning-state.md): the recorder takes it off each
 * ModelResponseReceived before the event is stored, and says what to keep
 * and what to let go, in the order the batch's events ask it:
 * - keep a round's state (unless its rule is `never`);
 * - a run of the turn completed with an answer: the turn is over, its
 *   `turn` state goes;
 * - a response of another turn: the conversation moved on, the `turn` state
 *   of every other turn goes;
 * - a call of a tool whose rule is stricter than what the round was kept
 *   by: the round's state is kept by that rule (`never`: it goes).
 */
import type { JsonObject, ModelResponseReceived, SealedPayload, StoredToolEvent } from '@toolhistory/contract';
import type { KeyScope, PayloadVault } from '../ports/payload-vault.port';
import type { ConversationKey, RunKey } from '../projection/read-model-keys';
import type { TokenCounter } from '../projection/invocation-tokens';
import type { ReasoningKeep } from '../replay/replay-policy';

/** What a response carried besides its text: opaque, never redacted, replayed only to its own provider and model. */
export interface ReasoningState {
  reasoning?: JsonObject[];
  callSignatures?: Record<string, string>;
  callItemIds?: Record<string, string>;
}

export interface KeptReasoning extends RunKey {
  /** The response event it was taken off. */
  eventId: string;
  roundIndex: number;
  /** The turn it belongs to (turnOf). */
  turn: string;
  keep: ReasoningKeep;
  state: ReasoningState;
  /** UTF-8 JSON bytes of the state. */
  bytes: number;
  /** What the reasoning items take in the model's context when replayed, counted once here (an item as its JSON text). */
  tokens: number;
  /** With encryption at rest: the state sealed under its conversation's data key (`state` is then empty). */
  sealedState?: SealedPayload;
}

export type ReasoningStep =
  | { kind: 'keep'; reasoning: KeptReasoning }
  | { kind: 'end-turn'; conversation: ConversationKey; turn: string }
  | { kind: 'other-turns'; conversation: ConversationKey; turn: string }
  | { kind: 'tool-rule'; run: RunKey; roundIndex: number; keep: ReasoningKeep };

/** The rules a recorder applies: the keep of a round by its channel, and a tool's own rule (undefined: it has none). */
export interface ReasoningRules {
  channelKeep(channel: string): ReasoningKeep;
  toolKeep(toolName: string): ReasoningKeep | undefined;
}

/**
 * A turn runs from a user message until a run of it completes with an
 * answer; runs resumed after an approval or a crash carry the same user
 * message and continue it. A run whose producer named no user message is a
 * turn of its own.
 */
export function turnOf(event: Pick<StoredToolEvent, 'userMessageId' | 'runId'>): string {
  return event.userMessageId !== undefined ? `message:${event.userMessageId}` : `run:${event.runId}`;
}

const STATE_FIELDS = ['reasoning', 'callSignatures', 'callItemIds'] as const;

/** The events as they are stored (responses without their state, with its size), and what to keep and let go, in order. */
export function setReasoningApart(
  events: readonly StoredToolEvent[],
  rules: ReasoningRules,
  tokens: TokenCounter,
): { events: StoredToolEvent[]; steps: ReasoningStep[] } {
  const steps: ReasoningStep[] = [];
  const stored = events.map((event): StoredToolEvent => {
    const conversation = { tenantId: event.tenantId, conversationId: event.conversationId };
    if (event.type === 'RunCompleted' && event.finishReason === 'stop') steps.push({ kind: 'end-turn', conversation, turn: turnOf(event) });
    if (event.type === 'ToolCallRequested') {
      const keep = rules.toolKeep(event.toolName);
      if (keep !== undefined)
        steps.push({ kind: 'tool-rule', run: { ...conversation, runId: event.runId }, roundIndex: event.roundIndex, keep });
    }
    if (event.type !== 'ModelResponseReceived') return event;
    steps.push({ kind: 'other-turns', conversation, turn: turnOf(event) });
    const { event: withoutState, state, bytes } = takeState(event);
    const keep = rules.channelKeep(event.channel);
    if (bytes > 0 && keep !== 'never') {
      steps.push({
        kind: 'keep',
        reasoning: {
          ...conversation,
          runId: event.runId,
          eventId: event.eventId,
          roundIndex: event.roundIndex,
          turn: turnOf(event),
          keep,
          state,
          bytes,
          tokens: reasoningTokens(state, tokens),
        },
      });
    }
    return withoutState;
  });
  return { events: stored, steps };
}

/** The reasoning items as the model's context takes them: each as its JSON text (signatures and item ids travel beside the calls). */
export function reasoningTokens(state: ReasoningState, tokens: TokenCounter): number {
  return (state.reasoning ?? []).reduce((sum, item) => sum + tokens(JSON.stringify(item)), 0);
}

function takeState(event: ModelResponseReceived): { event: ModelResponseReceived; state: ReasoningState; bytes: number } {
  const state: ReasoningState = {};
  const rest: Record<string, unknown> = { ...event };
  for (const field of STATE_FIELDS) {
    if (event[field] !== undefined) (state as Record<string, unknown>)[field] = event[field];
    delete rest[field];
  }
  const bytes = Object.keys(state).length === 0 ? 0 : Buffer.byteLength(JSON.stringify(state), 'utf8');
  return { event: { ...(rest as unknown as ModelResponseReceived), ...(bytes > 0 ? { reasoningBytes: bytes } : {}) }, state, bytes };
}

/**
 * The states the steps keep, sealed (docs/adr/033) under the data key of
 * their response's scope, in one call to the vault: reasoning can hold what
 * the tools returned, and rests as the payloads do.
 */
export async function sealKeptReasoning(
  steps: readonly ReasoningStep[],
  vault: PayloadVault,
  scopeOf: (eventId: string) => KeyScope,
): Promise<ReasoningStep[]> {
  const kept = steps.flatMap((step) => (step.kind === 'keep' ? [step.reasoning] : []));
  if (kept.length === 0) return [...steps];
  const sealed = await vault.seal(kept.map((r) => ({ scope: scopeOf(r.eventId), plaintext: JSON.stringify(r.state) })));
  const sealedOf = new Map(kept.map((r, i) => [r, sealed[i]]));
  return steps.map((step) =>
    step.kind === 'keep' ? { ...step, reasoning: { ...step.reasoning, state: {}, sealedState: sealedOf.get(step.reasoning) } } : step,
  );
}

/** Where reasoning state rests when the events rest elsewhere (EventStoreDB): the steps in order, in one unit. */
export interface ReasoningStore {
  apply(steps: readonly ReasoningStep[]): Promise<void>;
}
