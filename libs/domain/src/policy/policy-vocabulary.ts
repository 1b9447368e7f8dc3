/** Words the replay and redaction parts of the policy file share. */
export type PersistMode = 'full' | 'metadata' | 'none';
export const PERSIST_MODES: readonly PersistMode[] = ['full', 'metadata', 'none'];

/** Keys valid in `defaults` and tool rules whose values the redaction parser checks. */
export const REDACTION_KEYS = ['maskArguments', 'maskResult', 'detectors', 'maxResultChars'] as const;
