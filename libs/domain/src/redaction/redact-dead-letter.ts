import { DEFAULT_DETECTORS } from './redaction-policy';
import { redactPayload } from './redact-payload';
import { redactText } from './redact-text';

/**
 * What of a poison message may rest in the dead-letter topic. A value that
 * parses as JSON keeps its shape with every detector applied to every
 * string (whatever the policy says: its tool, and so its rule, cannot be
 * trusted); anything else is reduced to its size, since free bytes cannot
 * be redacted reliably.
 */
export function redactDeadLetterValue(value: Buffer | null): Buffer | null {
  if (value === null || value.length === 0) return value;
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(value));
  } catch {
    return Buffer.from(JSON.stringify({ unparseable: true, originalBytes: value.length }));
  }
  return Buffer.from(JSON.stringify(redactPayload(document, { maskPaths: [], detectors: DEFAULT_DETECTORS })));
}

/** Error texts may quote what they rejected. */
export const redactReason = (reason: string): string => redactText(reason, DEFAULT_DETECTORS);
