import type { DeadLetterPlace, StoredDeadLetter } from '../dead-letters/stored-dead-letter';

/** The dead-letter topic, read back, and the way home to the events topic. */
export interface DeadLetterTopic {
  readonly name: string;
  /** Every letter the topic holds now (from `since`, ms since the epoch, when given), by partition and offset. */
  read(options?: { since?: number }): Promise<StoredDeadLetter[]>;
  /** Publishes the letter's key and value to the events topic again, marked with where it came from. */
  republish(letter: StoredDeadLetter): Promise<void>;
}

/** Which dead letters were re-published: each at most once. */
export interface RedriveLedger {
  /** Of these places, the ones already redriven (as `topic/partition/offset`). */
  redriven(places: readonly DeadLetterPlace[]): Promise<Set<string>>;
  /** Claims the place for `by` and runs `publish`, together; false (and no publish) when it was claimed before. */
  claimAndPublish(place: DeadLetterPlace, by: string, publish: () => Promise<void>): Promise<boolean>;
}
