/**
 * Reads the replay part of the policy file, once at start-up: every problem
 * is named by its key, and an unknown key is one.
 */
import { isRecord } from '../policy/is-record';
import { PERSIST_MODES, PersistMode, REDACTION_KEYS, RETENTION_KEYS } from '../policy/policy-vocabulary';
import { parseInvalidationRules } from './causal-invalidation';
import { parseCitationRule } from './citation-compaction';
import {
  type ChannelReplayRule,
  DEFAULT_REPLAY_POLICY,
  MAX_TOKEN_BUDGET,
  REASONING_KEEPS,
  type ReasoningKeep,
  type ReplayPolicy,
  type StaleResultMode,
  type ToolReplayRule,
  type Visibility,
} from './replay-policy';

const VISIBILITIES: readonly Visibility[] = ['per_run', 'per_service_call'];
const STALE_MODES: readonly StaleResultMode[] = ['drop', 'placeholder'];

export type PolicyParseResult = { ok: true; policy: ReplayPolicy } | { ok: false; problems: string[] };

/** Validates a parsed policy document; unknown keys are errors, so a typo never silently does nothing. */
export function parseReplayPolicy(document: unknown): PolicyParseResult {
  const problems: string[] = [];
  if (!isRecord(document)) return { ok: false, problems: ['policy: must be a JSON object'] };

  for (const key of Object.keys(document)) {
    if (!['defaults', 'channels', 'tools', 'tenants'].includes(key))
      problems.push(`${key}: unknown key (expected defaults, channels, tools, tenants)`);
  }

  const defaults = { ...DEFAULT_REPLAY_POLICY.defaults };
  if (document.defaults !== undefined) {
    const rule = readRule(
      'defaults',
      document.defaults,
      [
        'freshnessSeconds',
        'visibility',
        'staleResults',
        'persist',
        'maxHistoryTokens',
        'abandonedAfterSeconds',
        'reasoning',
        ...REDACTION_KEYS,
        ...RETENTION_KEYS,
      ],
      problems,
    );
    Object.assign(defaults, rule);
  }

  const channels: Record<string, ChannelReplayRule> = readSection(
    document,
    'channels',
    'channel',
    ['freshnessSeconds', 'visibility', 'staleResults', 'maxHistoryTokens', 'abandonedAfterSeconds', 'reasoning', ...RETENTION_KEYS],
    problems,
  );
  const tools: Record<string, ToolReplayRule> = readSection(
    document,
    'tools',
    'tool name',
    [
      'freshnessSeconds',
      'staleResults',
      'persist',
      'invalidates',
      'sideEffects',
      'citations',
      'reasoning',
      ...REDACTION_KEYS,
      ...RETENTION_KEYS,
    ],
    problems,
  );

  return problems.length > 0 ? { ok: false, problems } : { ok: true, policy: { defaults, channels, tools } };
}

/** A section keyed by channel or tool name, each entry a rule of the allowed keys. */
function readSection(
  document: Record<string, unknown>,
  section: 'channels' | 'tools',
  keyedBy: string,
  allowed: readonly string[],
  problems: string[],
): Record<string, Record<string, never>> {
  const rules: Record<string, Record<string, never>> = {};
  const value = document[section];
  if (value === undefined) return rules;
  if (!isRecord(value)) {
    problems.push(`${section}: must be an object keyed by ${keyedBy}`);
    return rules;
  }
  for (const [name, rule] of Object.entries(value)) rules[name] = readRule(`${section}.${name}`, rule, allowed, problems);
  return rules;
}

function readRule(path: string, value: unknown, allowed: readonly string[], problems: string[]): Record<string, never> {
  const rule: Record<string, unknown> = {};
  if (!isRecord(value)) {
    problems.push(`${path}: must be an object`);
    return rule as Record<string, never>;
  }
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (!allowed.includes(key)) {
      problems.push(`${at}: unknown key (allowed here: ${allowed.join(', ')})`);
    } else if (key === 'freshnessSeconds' || key === 'abandonedAfterSeconds') {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) problems.push(`${at}: must be a whole number of seconds, 0 or more`);
      else rule[key] = v;
    } else if (key === 'sideEffects') {
      if (typeof v !== 'boolean') problems.push(`${at}: must be true or false`);
      else rule[key] = v;
    } else if (key === 'visibility') {
      if (!VISIBILITIES.includes(v as Visibility)) problems.push(`${at}: must be one of ${VISIBILITIES.join(', ')}`);
      else rule[key] = v;
    } else if (key === 'staleResults') {
      if (!STALE_MODES.includes(v as StaleResultMode)) problems.push(`${at}: must be one of ${STALE_MODES.join(', ')}`);
      else rule[key] = v;
    } else if (key === 'persist') {
      if (!PERSIST_MODES.includes(v as PersistMode)) problems.push(`${at}: must be one of ${PERSIST_MODES.join(', ')}`);
      else rule[key] = v;
    } else if (key === 'maxHistoryTokens') {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TOKEN_BUDGET)
        problems.push(`${at}: must be a whole number of tokens, 0 to ${MAX_TOKEN_BUDGET}`);
      else rule[key] = v;
    } else if (key === 'invalidates') {
      rule[key] = parseInvalidationRules(at, v, problems);
    } else if (key === 'citations') {
      const citations = parseCitationRule(at, v, problems);
      if (citations !== undefined) rule[key] = citations;
    } else if (key === 'reasoning') {
      const keep = isRecord(v) ? v.keep : undefined;
      if (!isRecord(v) || Object.keys(v).some((k) => k !== 'keep') || !REASONING_KEEPS.includes(keep as ReasoningKeep))
        problems.push(`${at}: must be {"keep": ${REASONING_KEEPS.map((k) => `"${k}"`).join(' | ')}}`);
      else rule[key] = { keep };
    }
    // Redaction and retention keys fall through: parseRedactionPolicy and parseRetentionPolicy check their values.
  }
  return rule as Record<string, never>;
}
