import { type DeadLetterFilter, type DeadLetterTopic, placeOf, type RedriveLedger } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { ListDeadLetters } from './list-dead-letters';

export interface RedriveCommand {
  filter: DeadLetterFilter;
  /** Every letter, when the filter selects nothing in particular: said on purpose. */
  all: boolean;
  dryRun: boolean;
  /** Who redrives, kept with each claim. */
  by: string;
}

/** Places (`partition:offset`) by what happened to them. */
export interface RedriveOutcome {
  published: string[];
  /** Dry run: what would be published. */
  wouldPublish: string[];
  alreadyRedriven: string[];
  /** Letters the broker refused whole: only their origin was kept, nothing to publish. */
  stubs: string[];
}

/**
 * Re-publishes selected dead letters to the events topic, after the cause
 * was fixed: each at most once (the ledger claims it in the same step), a
 * stub never. The values are the letters' own, redacted when they were
 * dead-lettered; the recorder treats them as any other message (an event
 * already recorded is recognized by its eventId).
 */
export class RedriveDeadLetters {
  private readonly list: ListDeadLetters;

  constructor(
    private readonly topic: DeadLetterTopic,
    private readonly ledger: RedriveLedger,
  ) {
    this.list = new ListDeadLetters(topic, ledger);
  }

  async execute(command: RedriveCommand): Promise<RedriveOutcome> {
    const { codes, since, partition, places } = command.filter;
    const selective = codes !== undefined || since !== undefined || partition !== undefined || places !== undefined;
    if (!selective && !command.all) {
      throw new AppError(ErrorCode.InvalidArgument, 'say which dead letters to redrive (places, --code, --since, --partition), or --all');
    }
    const outcome: RedriveOutcome = { published: [], wouldPublish: [], alreadyRedriven: [], stubs: [] };
    for (const letter of await this.list.execute(command.filter)) {
      const place = placeOf(letter);
      if (letter.stub) outcome.stubs.push(place);
      else if (letter.redriven) outcome.alreadyRedriven.push(place);
      else if (command.dryRun) outcome.wouldPublish.push(place);
      else if (await this.ledger.claimAndPublish(letter, command.by, () => this.topic.republish(letter))) outcome.published.push(place);
      else outcome.alreadyRedriven.push(place);
    }
    return outcome;
  }
}
