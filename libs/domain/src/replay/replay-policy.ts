/**
 * The replay part of the policy file: freshness windows and run visibility
 * per channel and per tool (parse-replay-policy.ts reads it), and the
 * lookups that say which of them applies to a tool's call on a channel.
 */
import type { PersistMode } from '../policy/policy-vocabulary';
import type { InvalidationRule } from './causal-invalidation';
import type { CitationRule } from './citation-compaction';

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
