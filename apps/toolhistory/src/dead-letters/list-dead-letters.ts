import {
  type DeadLetterFilter,
  type DeadLetterTopic,
  placeKey,
  type RedriveLedger,
  selectDeadLetters,
  type StoredDeadLetter,
} from '@toolhistory/domain';

export interface ListedDeadLetter extends StoredDeadLetter {
  /** Already re-published to the events topic. */
  redriven: boolean;
}

/** The dead letters a filter selects, each with whether it was redriven. */
export class ListDeadLetters {
  constructor(
    private readonly topic: DeadLetterTopic,
    private readonly ledger: RedriveLedger,
  ) {}

  async execute(filter: DeadLetterFilter): Promise<ListedDeadLetter[]> {
    const letters = selectDeadLetters(await this.topic.read({ since: filter.since }), filter);
    const redriven = await this.ledger.redriven(letters);
    return letters.map((l) => ({ ...l, redriven: redriven.has(placeKey(l)) }));
  }
}
