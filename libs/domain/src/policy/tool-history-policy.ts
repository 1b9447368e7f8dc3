import { DEFAULT_REDACTION_POLICY, parseRedactionPolicy, RedactionPolicy } from '../redaction/redaction-policy';
import { parseReplayPolicy } from '../replay/parse-replay-policy';
import { DEFAULT_REPLAY_POLICY, ReplayPolicy } from '../replay/replay-policy';
import { NO_RETENTION, parseRetentionPolicy, RetentionPolicy } from '../retention/retention-policy';

/** The whole policy file: one document, read by the replay, the redaction and the retention rules. */
export interface ToolHistoryPolicy {
  replay: ReplayPolicy;
  redaction: RedactionPolicy;
  retention: RetentionPolicy;
}

export const DEFAULT_POLICY: ToolHistoryPolicy = Object.freeze({
  replay: DEFAULT_REPLAY_POLICY,
  redaction: DEFAULT_REDACTION_POLICY,
  retention: NO_RETENTION,
});

export type ToolHistoryPolicyParseResult = { ok: true; policy: ToolHistoryPolicy } | { ok: false; problems: string[] };

/** Validates the document once; every problem of every part is listed together. */
export function parsePolicyDocument(document: unknown): ToolHistoryPolicyParseResult {
  const replay = parseReplayPolicy(document);
  const replayPolicy = replay.ok ? replay.policy : DEFAULT_REPLAY_POLICY;
  const persist = {
    defaults: replayPolicy.defaults.persist,
    tools: Object.fromEntries(Object.entries(replayPolicy.tools).map(([name, rule]) => [name, rule.persist])),
  };
  const redaction = parseRedactionPolicy(document, persist);
  const retention = parseRetentionPolicy(document);
  const problems = [
    ...(replay.ok ? [] : replay.problems),
    ...(redaction.ok ? [] : redaction.problems),
    ...(retention.ok ? [] : retention.problems),
  ];
  if (!replay.ok || !redaction.ok || !retention.ok) return { ok: false, problems: [...new Set(problems)] };
  return { ok: true, policy: { replay: replay.policy, redaction: redaction.policy, retention: retention.policy } };
}
