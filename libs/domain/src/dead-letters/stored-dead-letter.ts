/** Where a dead letter rests: its topic, partition and offset. */
export interface DeadLetterPlace {
  topic: string;
  partition: number;
  offset: string;
}

/** A dead letter as read back from its topic. */
export interface StoredDeadLetter extends DeadLetterPlace {
  key: string | null;
  /** The message as dead-lettered: with every detector applied; null for a stub. */
  value: Buffer | null;
  errorCode: string;
  reason: string;
  /** Where the message was first published. */
  original: { topic: string; partition: number; offset: string; timestamp: string };
  deadLetteredAt: string;
  /** The broker refused the letter itself: only its origin and size were kept, nothing to redrive. */
  stub: boolean;
}

export interface DeadLetterFilter {
  /** Error codes, any of them. */
  codes?: readonly string[];
  /** Dead-lettered at or after (ms since the epoch). */
  since?: number;
  partition?: number;
  /** Exact places, `partition:offset` in the dead-letter topic. */
  places?: readonly string[];
}

export const placeOf = (letter: DeadLetterPlace): string => `${letter.partition}:${letter.offset}`;
export const placeKey = (p: DeadLetterPlace): string => `${p.topic}/${p.partition}/${p.offset}`;

/** The letters a filter selects, in the order given (partition, then offset). */
export function selectDeadLetters(letters: readonly StoredDeadLetter[], filter: DeadLetterFilter): StoredDeadLetter[] {
  const places = filter.places ? new Set(filter.places) : undefined;
  return letters.filter(
    (l) =>
      (filter.codes === undefined || filter.codes.includes(l.errorCode)) &&
      (filter.since === undefined || Date.parse(l.deadLetteredAt) >= filter.since) &&
      (filter.partition === undefined || l.partition === filter.partition) &&
      (places === undefined || places.has(placeOf(l))),
  );
}

/** Parses `partition:offset`, or says what is wrong with it. */
export function parsePlace(text: string): { partition: number; offset: string } | { problem: string } {
  const match = /^(\d{1,9}):(\d{1,19})$/.exec(text);
  if (!match) return { problem: `"${text.slice(0, 64)}" is not a dead letter's place: write partition:offset, e.g. 0:42` };
  return { partition: Number(match[1]), offset: String(BigInt(match[2])) };
}
