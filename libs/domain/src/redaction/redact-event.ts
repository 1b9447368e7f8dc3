import type {
  JsonObject,
  ModelResponseReceived,
  JsonValue,
  PersistChoice,
  RedactionNote,
  StoredToolEvent,
  ToolApprovalDecided,
  ToolApprovalRequested,
  ToolCallRequested,
  ToolEvent,
  ToolResultReceived,
} from '@toolhistory/contract';
import { redactPayload } from './redact-payload';
import { redactText, RedactionCounts } from './redact-text';
import { RedactionPolicy, RedactionRule, redactionRuleFor } from './redaction-policy';

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');

function note(persist: RedactionNote['persist'], counts: RedactionCounts, original?: unknown): RedactionNote {
  const out: RedactionNote = { persist, counts: counts as Record<string, number> };
  if (persist !== 'none' && original !== undefined) out.originalBytes = jsonBytes(original);
  return out;
}

const STRICTNESS: Record<PersistChoice, number> = { full: 0, metadata: 1, none: 2 };

/** The stricter of two choices of what to keep of a payload: none over metadata over full. */
export const stricterPersist = (a: PersistChoice, b: PersistChoice): PersistChoice => (STRICTNESS[b] > STRICTNESS[a] ? b : a);

/**
 * What the producer kept of a call's arguments or a result: its persist
 * hook's choice when one ran (`producerRedacted`), else all of it. On a
 * recorded event the note is the recorder's, which is never laxer.
 */
export function producerPersist(event: ToolCallRequested | ToolResultReceived): PersistChoice {
  return event.producerRedacted === true ? (event.redaction?.persist ?? 'full') : 'full';
}

/**
 * The size of a payload that is not kept: the producer's `originalBytes`
 * when it withheld the payload itself (what it sent is empty), else the
 * size of what was received. None when nothing may be kept.
 */
function withheldNote(persist: 'metadata' | 'none', sizeOf: () => number | undefined): RedactionNote {
  const out: RedactionNote = { persist, counts: {} };
  const size = persist === 'metadata' ? sizeOf() : undefined;
  if (size !== undefined) out.originalBytes = size;
  return out;
}

/**
 * The event as it may rest in this service: arguments and results redacted
 * by the tool's rule (or dropped, per `persist`), a run's failure message
 * passed through the default detectors, and a note of what was done.
 * `toolName` is the tool a result belongs to, when its call is known; a
 * result whose call is not yet known gets the default rule. A payload its
 * producer redacted (`producerRedacted`) is kept as the stricter of the
 * producer's and the rule's `persist`; when both keep it, the rule's masks,
 * detectors and limits run over what the producer sent.
 *
 * It takes the event in the schema version it was received in and returns
 * it in that version, because that is how it is stored: it touches only
 * arguments, results, failure messages and approvals' texts, whose shape every supported
 * version shares. A RunCompleted (whose usage changed between versions)
 * carries no free text and is returned as it is.
 */
export function redactToolEvent(event: ToolEvent, policy: RedactionPolicy, toolName: string | null): ToolEvent;
export function redactToolEvent(event: StoredToolEvent, policy: RedactionPolicy, toolName: string | null): StoredToolEvent;
export function redactToolEvent(event: StoredToolEvent, policy: RedactionPolicy, toolName: string | null): StoredToolEvent {
  switch (event.type) {
    case 'ToolCallRequested': {
      const rule = redactionRuleFor(policy, event.toolName);
      const fromProducer = producerPersist(event);
      const persist = stricterPersist(rule.persist, fromProducer);
      if (persist !== 'full') {
        const size = () => (fromProducer === 'full' ? jsonBytes(event.arguments) : event.originalBytes);
        return { ...event, arguments: {}, redaction: withheldNote(persist, size) };
      }
      const counts: RedactionCounts = {};
      const args = redactPayload(event.arguments, { maskPaths: rule.maskArguments, detectors: rule.detectors }, counts) as JsonObject;
      return { ...event, arguments: args, redaction: note('full', counts, event.arguments) };
    }
    case 'ToolResultReceived':
      return redactResult(event, redactionRuleFor(policy, toolName));
    case 'RunFailed': {
      const counts: RedactionCounts = {};
      const detectors = policy.defaults.detectors;
      const error = { code: redactText(event.error.code, detectors, counts), message: redactText(event.error.message, detectors, counts) };
      return { ...event, error, redaction: note('full', counts) };
    }
    case 'ToolApprovalRequested':
    case 'ToolApprovalDecided':
      return redactApprovalTexts(event, policy);
    case 'RunCompleted':
      return event;
    case 'ModelResponseReceived':
      return redactResponseText(event, policy);
  }
}

/**
 * The response's own text is free text like a failure message: the default
 * detectors apply. Its reasoning, signatures and item ids are never
 * touched: signed state cannot be redacted without breaking it (it is kept
 * apart, and only as long as the policy allows, instead).
 */
function redactResponseText(event: ModelResponseReceived, policy: RedactionPolicy): ModelResponseReceived {
  if (event.text === undefined) return event;
  const counts: RedactionCounts = {};
  return { ...event, text: redactText(event.text, policy.defaults.detectors, counts), redaction: note('full', counts) };
}

/** A person's reason and name are free text like a failure message: the default detectors apply. */
function redactApprovalTexts<E extends ToolApprovalRequested | ToolApprovalDecided>(event: E, policy: RedactionPolicy): E {
  const counts: RedactionCounts = {};
  const detectors = policy.defaults.detectors;
  const out: E = { ...event };
  if (event.reason !== undefined) out.reason = redactText(event.reason, detectors, counts);
  if (event.type === 'ToolApprovalDecided' && event.decidedBy !== undefined)
    (out as ToolApprovalDecided).decidedBy = redactText(event.decidedBy, detectors, counts);
  return { ...out, redaction: note('full', counts) };
}

function redactResult(event: ToolResultReceived, rule: RedactionRule): ToolResultReceived {
  // A recorded result's note (re-redacting an early result), or the producer's choice on a new one.
  const earlier = event.redaction;
  const fromProducer = producerPersist(event);
  const persist = stricterPersist(rule.persist, fromProducer);
  if (persist !== 'full') {
    const size = () => (fromProducer === 'full' ? (earlier?.originalBytes ?? jsonBytes(event.result)) : event.originalBytes);
    return { ...event, result: null, redaction: withheldNote(persist, size) };
  }
  const original = earlier?.originalBytes;
  const counts: RedactionCounts = { ...(earlier?.counts ?? {}) };
  const result = redactPayload(
    event.result,
    { maskPaths: rule.maskResult, detectors: rule.detectors, maxChars: rule.maxResultChars },
    counts,
  ) as JsonValue;
  return {
    ...event,
    result,
    redaction: { persist: 'full', counts: counts as Record<string, number>, originalBytes: original ?? jsonBytes(event.result) },
  };
}

/**
 * A result recorded before its call was redacted by the default rule, as
 * its tool was unknown. Once the call names the tool, the tool's own rule is
 * applied to the stored result (redaction is idempotent, so only what the
 * tool adds changes). Returns null when nothing changes, and always for a
 * result whose payload was not kept (by the policy or by its producer): a
 * later call never brings back what was dropped.
 */
export function redactEarlyResult(stored: ToolResultReceived, policy: RedactionPolicy, toolName: string): ToolResultReceived | null {
  const rule = redactionRuleFor(policy, toolName);
  if (rule === policy.defaults || stored.redaction?.persist === 'metadata' || stored.redaction?.persist === 'none') return null;
  const redacted = redactResult(stored, rule);
  return JSON.stringify(redacted) === JSON.stringify(stored) ? null : redacted;
}
