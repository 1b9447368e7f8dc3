import { DEFAULT_DETECTORS, DEFAULT_REDACTION_POLICY, RedactionPolicy, redactionRuleFor } from './redaction-policy';
import { redactPayload } from './redact-payload';
import { redactionMarker, redactText } from './redact-text';

/**
 * What of a poison message may rest in the dead-letter topic. A value that
 * parses as JSON keeps its shape, with the policy's rule applied to the
 * payload it carries where the shape says which (a call's `arguments` by
 * its `toolName`'s rule, else the default rule; a result's `result` by the
 * default rule, as its tool is unknown here): `persist` other than `full`
 * drops the payload, and the mask paths and size limit apply. Then every
 * detector runs over every string, whatever the policy says, since a poison
 * message's tool cannot be trusted. Anything that is not JSON is reduced to
 * its size, since free bytes cannot be redacted reliably.
 */
export function redactDeadLetterValue(value: Buffer | null, policy: RedactionPolicy = DEFAULT_REDACTION_POLICY): Buffer | null {
  if (value === null || value.length === 0) return value;
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(value));
  } catch {
    return Buffer.from(JSON.stringify({ unparseable: true, originalBytes: value.length }));
  }
  return Buffer.from(JSON.stringify(redactPayload(withToolRule(document, policy), { maskPaths: [], detectors: DEFAULT_DETECTORS })));
}

const DROPPED = redactionMarker('persist');

function withToolRule(document: unknown, policy: RedactionPolicy): unknown {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return document;
  const out: Record<string, unknown> = { ...document };
  if (Object.hasOwn(out, 'arguments')) {
    const rule = redactionRuleFor(policy, typeof out.toolName === 'string' ? out.toolName : null);
    out.arguments =
      rule.persist === 'full' ? redactPayload(out.arguments, { maskPaths: rule.maskArguments, detectors: new Set() }) : DROPPED;
  }
  if (Object.hasOwn(out, 'result')) {
    const rule = policy.defaults;
    out.result =
      rule.persist === 'full'
        ? redactPayload(out.result, { maskPaths: rule.maskResult, detectors: new Set(), maxChars: rule.maxResultChars })
        : DROPPED;
  }
  return out;
}

/** Error texts may quote what they rejected. */
export const redactReason = (reason: string): string => redactText(reason, DEFAULT_DETECTORS);
