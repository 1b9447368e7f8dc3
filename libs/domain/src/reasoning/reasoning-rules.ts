import { reasoningKeep, type ReplayPolicy } from '../replay/replay-policy';
import type { ReasoningRules } from './reasoning-apart';

/** The policy's `reasoning.keep` rules as the recorder applies them: a channel's (else the default), and each tool's own. */
export function reasoningRulesOf(policy: ReplayPolicy): ReasoningRules {
  return {
    channelKeep: (channel) => reasoningKeep(policy, channel),
    toolKeep: (toolName) => (Object.hasOwn(policy.tools, toolName) ? policy.tools[toolName].reasoning?.keep : undefined),
  };
}
