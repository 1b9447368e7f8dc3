/**
 * The replay part of the policy file: freshness windows and run visibility
 * per channel and per tool. Parsed once at start-up; every problem is named
 * by its key.
 */
import { isRecord } from '../policy/is-record';
import { PERSIST_MODES, PersistMode, REDACTION_KEYS, RETENTION_KEYS } from '../policy/policy-vocabulary';
import { InvalidationRule, parseInvalidationRules } from './causal-invalidation';
import { CitationRule, parseCitationRule } from './citation-compaction';

export type Visibility = 'per_run' | 'per_service_call';
export type StaleResultMode = 'drop' | 'placeholder';
/**
 * How long a round's reasoning state rests: until its turn ends (default),
 * always, or never (dropped when recorded). The strictest of a round's
 * tools, its channel and the defaults applies.
 */
export type ReasoningKeep = 'turn' | 'always' | 'never';
export const REASONING_KEEPS: readonly ReasoningKeep[] = ['never', 'turn', 'always'];

/** The stricter of two: never before turn before always. */
export function stricterKeep(a: ReasoningKeep, b: ReasoningKeep): ReasoningKeep {
  return REASONING_KEEPS.indexOf(a) <= REASONING_KEEPS.indexOf(b) ? a : b;
}

export interface ToolReplayRule {
  freshnessSeconds?: number;
  staleResults?: StaleResultMode;
  persist?: PersistMode;
  /** Earlier results a successful call of this tool makes stale (causal-invalidation.ts). */
  invalidates?: InvalidationRule[];
  /** The tool changes the world (charges a card, sends a mail): its calls are never silently dropped (replay-call-rules.ts). */
  sideEffects?: boolean;
  /** Where the tool's result lists the sources an answer cites: replay keeps the cited ones (citation-compaction.ts). */
  citations?: CitationRule;
  /** How long the reasoning of a round that called this tool rests. */
  reasoning?: { keep: ReasoningKeep };
}

export interface ChannelReplayRule {
  freshnessSeconds?: number;
  visibility?: Visibility;
  staleResults?: StaleResultMode;
  maxHistoryTokens?: number;
  abandonedAfterSeconds?: number;
  reasoning?: { keep: ReasoningKeep };
}

export interface ReplayPolicy {
  defaults: {
    freshnessSeconds: number;
    visibility: Visibility;
    staleResults: StaleResultMode;
    persist: PersistMode;
    /** No limit when absent. */
    maxHistoryTokens?: number;
    /** A running run with no event for longer than this is taken as abandoned: its side-effect calls get their notice. */
    abandonedAfterSeconds: number;
    reasoning: { keep: ReasoningKeep };
  };
  channels: Record<string, ChannelReplayRule>;
  tools: Record<string, ToolReplayRule>;
}

export const DEFAULT_FRESHNESS_SECONDS = 300;
export const DEFAULT_ABANDONED_AFTER_SECONDS = 600;

export const DEFAULT_REPLAY_POLICY: ReplayPolicy = Object.freeze({
  defaults: {
    freshnessSeconds: DEFAULT_FRESHNESS_SECONDS,
    visibility: 'per_run',
    staleResults: 'drop',
    persist: 'full',
    abandonedAfterSeconds: DEFAULT_ABANDONED_AFTER_SECONDS,
    reasoning: { keep: 'turn' },
  },
  channels: {},
  tools: {},
}) as ReplayPolicy;

/** The largest budget a request (int32) can carry. */
export const MAX_TOKEN_BUDGET = 2_147_483_647;

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

/** A tool's window beats its channel's, which beats the default; a request override beats all. */
export function freshnessWindowSeconds(policy: ReplayPolicy, channel: string, toolName: string, override?: number): number {
  if (override !== undefined) return override;
  return (
    own(policy.tools, toolName)?.freshnessSeconds ?? own(policy.channels, channel)?.freshnessSeconds ?? policy.defaults.freshnessSeconds
  );
}

export function visibilityOf(policy: ReplayPolicy, channel: string): Visibility {
  return own(policy.channels, channel)?.visibility ?? policy.defaults.visibility;
}

export function staleResultMode(policy: ReplayPolicy, channel: string, toolName: string, override?: StaleResultMode): StaleResultMode {
  return (
    override ?? own(policy.tools, toolName)?.staleResults ?? own(policy.channels, channel)?.staleResults ?? policy.defaults.staleResults
  );
}

export function persistMode(policy: ReplayPolicy, toolName: string): PersistMode {
  return own(policy.tools, toolName)?.persist ?? policy.defaults.persist;
}

/** The request's budget beats its channel's, which beats the default; undefined is no limit. */
export function historyTokenBudget(policy: ReplayPolicy, channel: string, override?: number): number | undefined {
  return override ?? own(policy.channels, channel)?.maxHistoryTokens ?? policy.defaults.maxHistoryTokens;
}

/** Whether the tool's calls change the world, so replay never drops one silently. */
export function hasSideEffects(policy: ReplayPolicy, toolName: string): boolean {
  return own(policy.tools, toolName)?.sideEffects === true;
}

/** A channel's silence limit beats the default. */
export function abandonedAfterSeconds(policy: ReplayPolicy, channel: string): number {
  return own(policy.channels, channel)?.abandonedAfterSeconds ?? policy.defaults.abandonedAfterSeconds;
}

/** What a successful call of `toolName` invalidates, if it has a rule. */
export function invalidationRules(policy: ReplayPolicy, toolName: string): readonly InvalidationRule[] | undefined {
  return own(policy.tools, toolName)?.invalidates;
}

/** Where the tool's results list their sources, if it has a citations rule. */
export function citationRule(policy: ReplayPolicy, toolName: string): CitationRule | undefined {
  return own(policy.tools, toolName)?.citations;
}

/**
 * How long a round's reasoning rests: the strictest of its tools' rules, its
 * channel's and the default's (docs/adr/027). Without tools (the round's
 * calls not known yet): its channel's, else the default.
 */
export function reasoningKeep(policy: ReplayPolicy, channel: string, toolNames: readonly string[] = []): ReasoningKeep {
  const base = own(policy.channels, channel)?.reasoning?.keep ?? policy.defaults.reasoning.keep;
  return toolNames.reduce<ReasoningKeep>((keep, tool) => stricterKeep(keep, own(policy.tools, tool)?.reasoning?.keep ?? keep), base);
}

/** Tool and channel names come from producers: "constructor" must not find Object.prototype's. */
function own<T>(rules: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(rules, name) ? rules[name] : undefined;
}
