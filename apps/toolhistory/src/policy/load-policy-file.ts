import { readFileSync } from 'node:fs';
import { DEFAULT_POLICY, parsePolicyDocument, ToolHistoryPolicy } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** Reads and validates the policy file once at start-up; any problem stops the start, naming the rule. */
export function loadPolicyFile(path: string | null): ToolHistoryPolicy {
  if (path === null) return DEFAULT_POLICY;
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new AppError(ErrorCode.InvalidConfig, `POLICY_FILE ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = parsePolicyDocument(document);
  if (!parsed.ok) {
    throw new AppError(ErrorCode.InvalidConfig, `invalid policy in ${path}:\n  - ${parsed.problems.join('\n  - ')}`, {
      details: { problems: parsed.problems },
    });
  }
  return parsed.policy;
}
