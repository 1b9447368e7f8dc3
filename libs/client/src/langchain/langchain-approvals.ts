import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
// A plain file of the contract with no imports of their own: bundled into the package when it is built.
import { MAX_ID_LENGTH } from '../../../contract/src/tool-event.types';
import { fittedReason } from '../recording/contract-fit';
import type { ApprovalDecision } from '../recording/recorded-run';
import { callPositionInMessages, type PlacedCall } from '../recording/resumed-calls';

/** An approval's reason longer than this is cut: it is for a person to read, not a payload. */
export { MAX_APPROVAL_REASON_LENGTH } from '../recording/contract-fit';

/** A LangGraph interrupt as it travels through the callbacks (GraphInterrupt, recognised by shape: this package does not depend on LangGraph). */
export interface InterruptSignal {
  interrupts: ReadonlyArray<{ id?: string; value?: unknown }>;
}

/** What a resume value says about an approval. */
export type { ApprovalDecision };

/** A LangGraph interrupt (a GraphInterrupt or NodeInterrupt thrown by `interrupt()`): a bubbling signal that carries its interrupts. */
export function isInterrupt(error: unknown): error is InterruptSignal {
  const candidate = error as { is_bubble_up?: unknown; interrupts?: unknown } | null;
  return typeof candidate === 'object' && candidate !== null && candidate.is_bubble_up === true && Array.isArray(candidate.interrupts);
}

/**
 * Why the interrupt asks, as text for the person: its value when that is a
 * string, else the value's `reason`, `message` or `description` when one is
 * a string (the shapes hosts commonly interrupt with, such as LangGraph's
 * Agent Inbox requests). Anything else gives no reason: a value is no text
 * to show, and could carry what the policy would not keep.
 */
export function interruptReasonOf(signal: InterruptSignal): string | undefined {
  for (const { value } of signal.interrupts) {
    const text = typeof value === 'string' ? value : textField(value, ['reason', 'message', 'description']);
    if (text !== undefined && text.trim() !== '') return fittedReason(text);
  }
  return undefined;
}

/** The id LangGraph gave the interrupt: a Command may resume several interrupts with a value per id. */
export function interruptIdOf(signal: InterruptSignal): string | undefined {
  return signal.interrupts.find((interrupt) => typeof interrupt.id === 'string' && interrupt.id !== '')?.id;
}

/** The value a Command resumes the interrupt `interruptId` with: its entry when the value is a map of interrupt ids, else the value itself. */
export function resumeValueFor(resume: unknown, interruptId: string | undefined): unknown {
  if (interruptId !== undefined && isPlainObject(resume) && Object.hasOwn(resume, interruptId)) return resume[interruptId];
  return resume;
}

const APPROVING = new Set(['approve', 'approved', 'accept', 'accepted', 'allow', 'allowed', 'confirm', 'confirmed', 'edit', 'yes', 'y']);
const DENYING = new Set(['deny', 'denied', 'reject', 'rejected', 'decline', 'declined', 'refuse', 'refused', 'ignore', 'no', 'n']);

/**
 * What a resume value says about approval, when it says it in a way the
 * adapter recognises; undefined otherwise (the tool's own code reads the
 * value, the adapter cannot know what it meant). Recognised:
 * - `true` or `false`;
 * - a word: approve, approved, accept, allow, confirm, edit, yes (approved);
 *   deny, denied, reject, decline, refuse, ignore, no (denied);
 * - an object with `approved` (or `approve`) a boolean, or `decision`,
 *   `action` or `type` one of those words (LangGraph's Agent Inbox answers
 *   with `type` accept, edit, ignore or response; `response` says nothing
 *   about approval), with the text of `reason`, `message` or `comment` as
 *   the reason and `decidedBy` (or `decided_by`) as who decided;
 * - `{ decisions: [one such object] }` (LangChain's human-in-the-loop
 *   middleware answers with a list of decisions).
 */
export function approvalDecisionOf(resume: unknown): ApprovalDecision | undefined {
  if (typeof resume === 'boolean') return { approved: resume };
  if (typeof resume === 'string') return wordDecision(resume);
  if (!isPlainObject(resume)) return undefined;
  if (Array.isArray(resume.decisions)) return resume.decisions.length === 1 ? approvalDecisionOf(resume.decisions[0]) : undefined;
  const flag = [resume.approved, resume.approve].find((value): value is boolean => typeof value === 'boolean');
  const word = textField(resume, ['decision', 'action', 'type']);
  const decision = flag !== undefined ? { approved: flag } : word === undefined ? undefined : wordDecision(word);
  if (decision === undefined) return undefined;
  const reason = textField(resume, ['reason', 'message', 'comment']);
  const decidedBy = textField(resume, ['decidedBy', 'decided_by']);
  return {
    ...decision,
    ...(reason === undefined || reason === '' ? {} : { reason: fittedReason(reason) }),
    ...(decidedBy === undefined || decidedBy === '' || decidedBy.length > MAX_ID_LENGTH ? {} : { decidedBy }),
  };
}

function wordDecision(word: string): ApprovalDecision | undefined {
  const normalized = word.trim().toLowerCase();
  if (APPROVING.has(normalized)) return { approved: true };
  if (DENYING.has(normalized)) return { approved: false };
  return undefined;
}

/**
 * Where the model's call `toolCallId` sits, by the agent's messages (its
 * graph state): its index in its AIMessage's tool_calls (of
 * `callsInRound`), and the count of AIMessages with tool calls since the
 * last HumanMessage before it. Right when the call's run began at that
 * HumanMessage; a run that itself resumed an interrupt leaves no mark in the
 * messages, so for a call made after a resume, pass the replay's
 * `pendingApprovals` to the handler instead.
 */
export function callPositionIn(messages: readonly BaseMessage[], toolCallId: string): PlacedCall | undefined {
  return callPositionInMessages(messages, toolCallId, {
    callsOf: (message) => toolCallsIn(message).map((call) => ({ id: call.id, name: call.name })),
    startsRun: (message) => HumanMessage.isInstance(message),
  });
}

function toolCallsIn(message: BaseMessage): NonNullable<AIMessage['tool_calls']> {
  return AIMessage.isInstance(message) ? (message.tool_calls ?? []) : [];
}

function textField(value: unknown, names: readonly string[]): string | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const name of names) if (typeof value[name] === 'string') return value[name];
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
