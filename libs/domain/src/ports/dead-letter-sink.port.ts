import type { ErrorCode } from '@toolhistory/errors';

/** A message the recorder will never be able to record, with why. */
export interface DeadLetter {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  errorCode: ErrorCode;
  reason: string;
  /** The letter itself was refused (too large): this one carries its origin and size only. */
  stub?: boolean;
}

export interface DeadLetterSink {
  /** Resolves once every letter is durably stored; rejects (retriably) otherwise. */
  publish(letters: readonly DeadLetter[]): Promise<void>;
}
