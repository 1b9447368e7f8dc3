/**
 * How long payloads rest (docs/adr/033): `retention` in the policy file's
 * `defaults`, per tenant (`tenants.<id>`), per channel and per tool. Each
 * one that applies is a limit, and the shortest wins: a tool cannot keep a
 * payload longer than its channel or tenant allows. Payloads only (ids,
 * names, times, sizes, usage and approval facts stay), counted from the
 * recording time.
 */
import { isRecord } from '../policy/is-record';

export interface RetentionPolicy {
  /** Milliseconds; absent: no limit at that level. */
  defaults?: number;
  tenants: Record<string, number>;
  channels: Record<string, number>;
  tools: Record<string, number>;
}

export const NO_RETENTION: RetentionPolicy = Object.freeze({ tenants: {}, channels: {}, tools: {} }) as RetentionPolicy;

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Past ten years a retention is a typo, and far past any key period worth having. */
const MAX_RETENTION_MS = 3_650 * UNIT_MS.d;

/** `30d`, `12h`, `15m`, `90s`: a whole number and one unit; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9]\d{0,9})([smhd])$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms <= MAX_RETENTION_MS ? ms : undefined;
}

/** A duration as the policy file writes it, in its largest whole unit. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${Math.round(ms / 1_000)}s`;
}

export type RetentionParseResult = { ok: true; policy: RetentionPolicy } | { ok: false; problems: string[] };

/**
 * Reads the `retention` keys of a policy document: in `defaults`, in each
 * `channels.<name>` and `tools.<name>`, and in `tenants.<id>` (the one key
 * a tenant's entry has). Other keys are the other parsers' to check.
 */
export function parseRetentionPolicy(document: unknown): RetentionParseResult {
  const problems: string[] = [];
  if (!isRecord(document)) return { ok: false, problems: ['policy: must be a JSON object'] };
  const read = (at: string, value: unknown): number | undefined => {
    if (value === undefined) return undefined;
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined) problems.push(`${at}.retention: must be a duration such as "30d", "12h", "15m" or "90s" (at most 3650d)`);
    return ms;
  };
  const policy: RetentionPolicy = { tenants: {}, channels: {}, tools: {} };
  if (isRecord(document.defaults)) {
    const ms = read('defaults', document.defaults.retention);
    if (ms !== undefined) policy.defaults = ms;
  }
  for (const section of ['channels', 'tools'] as const) {
    const rules = document[section];
    if (!isRecord(rules)) continue;
    for (const [name, rule] of Object.entries(rules)) {
      if (!isRecord(rule)) continue;
      const ms = read(`${section}.${name}`, rule.retention);
      if (ms !== undefined) policy[section][name] = ms;
    }
  }
  const tenants = document.tenants;
  if (tenants !== undefined) {
    if (!isRecord(tenants)) problems.push('tenants: must be an object keyed by tenant id');
    else
      for (const [id, rule] of Object.entries(tenants)) {
        if (!isRecord(rule)) {
          problems.push(`tenants.${id}: must be an object`);
          continue;
        }
        for (const key of Object.keys(rule))
          if (key !== 'retention') problems.push(`tenants.${id}.${key}: unknown key (allowed here: retention)`);
        const ms = read(`tenants.${id}`, rule.retention);
        if (ms !== undefined) policy.tenants[id] = ms;
      }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, policy };
}

export interface RetentionSubject {
  tenantId: string;
  channel: string;
  /** The tool the payload belongs to; null while unknown (a result before its call): the other limits apply. */
  toolName: string | null;
}

/** The shortest retention that applies, in milliseconds; null: no limit (kept until erased). */
export function retentionOf(policy: RetentionPolicy, subject: RetentionSubject): number | null {
  const limits = [
    policy.defaults,
    own(policy.tenants, subject.tenantId),
    own(policy.channels, subject.channel),
    subject.toolName === null ? undefined : own(policy.tools, subject.toolName),
  ].filter((ms): ms is number => ms !== undefined);
  return limits.length === 0 ? null : Math.min(...limits);
}

/** Whether any level names a retention: without, no payload ever expires. */
export function hasRetention(policy: RetentionPolicy): boolean {
  return policy.defaults !== undefined || [policy.tenants, policy.channels, policy.tools].some((rules) => Object.keys(rules).length > 0);
}

/**
 * The length of a retention's key periods: a hundredth of it, between a
 * second and an hour. Payloads whose retention ends within one period share
 * a data key, destroyed when the period starts: so a conversation has at
 * most about a hundred live keys per retention, and a payload rests at
 * most its retention, never more, and at least 99% of it.
 */
export function keyPeriodMs(retentionMs: number): number {
  return Math.min(3_600_000, Math.max(1_000, Math.floor(retentionMs / 100)));
}

/**
 * When a payload recorded at `recordedAtMs` stops being kept: its retention
 * later, rounded down to its key period (so it is never kept longer); null
 * when no retention applies.
 */
export function payloadExpiresAt(recordedAtMs: number, retentionMs: number | null): string | null {
  if (retentionMs === null) return null;
  const period = keyPeriodMs(retentionMs);
  return new Date(Math.floor((recordedAtMs + retentionMs) / period) * period).toISOString();
}

function own(rules: Record<string, number>, name: string): number | undefined {
  return Object.hasOwn(rules, name) ? rules[name] : undefined;
}
