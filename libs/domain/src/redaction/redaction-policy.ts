import { isRecord } from '../policy/is-record';
import type { PersistMode } from '../policy/policy-vocabulary';
import { DETECTOR_KINDS, DetectorKind } from './detectors';
import { parseJsonPath, PathStep } from './json-path';

/**
 * The redaction part of the policy file: what the recorder keeps of each
 * tool's arguments and result. Rules live under `defaults` and
 * `tools.<toolName>`; a key a tool sets replaces the default's value for
 * that key (lists are replaced, not merged).
 */
export interface MaskPath {
  path: string;
  steps: PathStep[];
}

export interface RedactionRule {
  persist: PersistMode;
  maskArguments: readonly MaskPath[];
  maskResult: readonly MaskPath[];
  detectors: ReadonlySet<DetectorKind>;
  /** Results longer than this (as JSON text) are cut with a visible marker; undefined = no limit. */
  maxResultChars?: number;
}

export interface RedactionPolicy {
  defaults: RedactionRule;
  tools: Record<string, Partial<RedactionRule>>;
}

/** Secure by default: with no policy file every detector runs on every payload. */
export const DEFAULT_DETECTORS: ReadonlySet<DetectorKind> = new Set(DETECTOR_KINDS);

export const DEFAULT_REDACTION_RULE: RedactionRule = Object.freeze({
  persist: 'full',
  maskArguments: [],
  maskResult: [],
  detectors: DEFAULT_DETECTORS,
}) as RedactionRule;

export const DEFAULT_REDACTION_POLICY: RedactionPolicy = Object.freeze({ defaults: DEFAULT_REDACTION_RULE, tools: {} }) as RedactionPolicy;

export type RedactionPolicyParseResult = { ok: true; policy: RedactionPolicy } | { ok: false; problems: string[] };

/**
 * Reads the redaction keys of `defaults` and of each `tools.<name>` entry.
 * Other keys belong to the replay parser, which also reports unknown ones;
 * `persist` is taken from the replay policy so both read the same value.
 */
export function parseRedactionPolicy(
  document: unknown,
  persist: { defaults: PersistMode; tools: Record<string, PersistMode | undefined> },
): RedactionPolicyParseResult {
  const problems: string[] = [];
  if (!isRecord(document)) return { ok: false, problems: ['policy: must be a JSON object'] };

  const defaults: RedactionRule = {
    ...DEFAULT_REDACTION_RULE,
    ...readRule('defaults', document.defaults, problems),
    persist: persist.defaults,
  };
  const tools: Record<string, Partial<RedactionRule>> = {};
  if (isRecord(document.tools)) {
    for (const [name, value] of Object.entries(document.tools)) {
      const rule = readRule(`tools.${name}`, value, problems);
      const toolPersist = persist.tools[name];
      tools[name] = toolPersist === undefined ? rule : { ...rule, persist: toolPersist };
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, policy: { defaults, tools } };
}

function readRule(at: string, value: unknown, problems: string[]): Partial<RedactionRule> {
  const rule: Partial<RedactionRule> = {};
  // Shape errors of the section itself are the replay parser's to report.
  if (!isRecord(value)) return rule;
  if (value.maskArguments !== undefined) rule.maskArguments = readPaths(`${at}.maskArguments`, value.maskArguments, problems);
  if (value.maskResult !== undefined) rule.maskResult = readPaths(`${at}.maskResult`, value.maskResult, problems);
  if (value.detectors !== undefined) rule.detectors = readDetectors(`${at}.detectors`, value.detectors, problems);
  if (value.maxResultChars !== undefined) {
    const max = value.maxResultChars;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
      problems.push(`${at}.maxResultChars: must be a whole number of characters, 1 or more`);
    else rule.maxResultChars = max;
  }
  return rule;
}

function readPaths(at: string, value: unknown, problems: string[]): MaskPath[] {
  if (!Array.isArray(value)) {
    problems.push(`${at}: must be a list of JSON paths such as "$.card.number"`);
    return [];
  }
  const paths: MaskPath[] = [];
  value.forEach((path, i) => {
    if (typeof path !== 'string') {
      problems.push(`${at}[${i}]: must be a JSON path string`);
      return;
    }
    const parsed = parseJsonPath(path);
    if (parsed.ok) paths.push({ path, steps: parsed.steps });
    else problems.push(`${at}[${i}]: ${parsed.error}`);
  });
  return paths;
}

function readDetectors(at: string, value: unknown, problems: string[]): Set<DetectorKind> {
  const kinds = new Set<DetectorKind>();
  if (!Array.isArray(value)) {
    problems.push(`${at}: must be a list of detector names (${DETECTOR_KINDS.join(', ')})`);
    return kinds;
  }
  value.forEach((kind, i) => {
    if ((DETECTOR_KINDS as readonly unknown[]).includes(kind)) kinds.add(kind as DetectorKind);
    else problems.push(`${at}[${i}]: unknown detector ${JSON.stringify(kind)} (known: ${DETECTOR_KINDS.join(', ')})`);
  });
  return kinds;
}

/** The rule for a tool: its own keys over the defaults. An unknown tool (null) gets the defaults. */
export function redactionRuleFor(policy: RedactionPolicy, toolName: string | null): RedactionRule {
  const own = toolName !== null && Object.hasOwn(policy.tools, toolName) ? policy.tools[toolName] : undefined;
  return own ? { ...policy.defaults, ...own } : policy.defaults;
}
