const TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});

export const formatTime = (iso: string | null): string => (iso === null ? '—' : TIME.format(new Date(iso)));

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** Why replay leaves a call out, in an auditor's words (the domain's omission reasons). */
export const OMISSION_REASONS: Record<string, string> = {
  stale: 'result older than the freshness window',
  orphan_call: 'call without a result',
  orphan_result: 'result without its call',
  run_failed: 'its run failed',
  run_incomplete: 'its run has not finished',
  trailing_unsent: 'the round was not sent to the model',
  policy_skipped: 'the tool policy keeps it out of replay',
  invalidated: 'made stale by a later mutating call',
  token_budget: 'over the token budget',
  awaiting_approval: "waiting for a person's approval",
  awaiting_result: 'approved, its result not recorded yet',
  off_branch: "not on the host's current branch of messages",
};
