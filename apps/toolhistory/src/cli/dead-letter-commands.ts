import { type DeadLetterFilter, parsePlace, type StoredDeadLetter } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { ListDeadLetters, type ListedDeadLetter } from '../dead-letters/list-dead-letters';
import { RedriveDeadLetters } from '../dead-letters/redrive-dead-letters';
import type { CliContext, CliOutput } from './cli-context';

export interface DeadLetterOptions {
  code?: string[];
  since?: string;
  partition?: string;
  json?: boolean;
}

const REDACTED_NOTE =
  'note: dead letters are stored with every redaction detector applied: values shown and redriven are the redacted ones, not what the producer sent';

/** The filter the options describe, or INVALID_ARGUMENT naming the option that is wrong. */
export function filterOf(options: DeadLetterOptions, places: readonly string[] = []): DeadLetterFilter {
  const problems: string[] = [];
  const filter: DeadLetterFilter = {};
  if (options.code?.length) filter.codes = options.code;
  if (options.since !== undefined) {
    const since = Date.parse(options.since);
    if (Number.isNaN(since)) problems.push(`--since "${options.since}" is not a time: write an ISO 8601 time, e.g. 2026-11-23T08:00:00Z`);
    else filter.since = since;
  }
  if (options.partition !== undefined) {
    if (!/^\d{1,9}$/.test(options.partition)) problems.push(`--partition "${options.partition}" is not a partition number`);
    else filter.partition = Number(options.partition);
  }
  if (places.length > 0) {
    const parsed = places.map(parsePlace);
    for (const p of parsed) if ('problem' in p) problems.push(p.problem);
    filter.places = parsed.flatMap((p) => ('problem' in p ? [] : [`${p.partition}:${p.offset}`]));
  }
  if (problems.length > 0) throw new AppError(ErrorCode.InvalidArgument, problems.join('; '));
  return filter;
}

const describe = (l: ListedDeadLetter): string =>
  [
    `${l.partition}:${l.offset}`,
    l.deadLetteredAt,
    l.errorCode,
    `from ${l.original.topic}/${l.original.partition}/${l.original.offset}`,
    ...(l.stub ? ['stub'] : []),
    ...(l.redriven ? ['redriven'] : []),
    l.reason,
  ].join('  ');

const asJson = (l: ListedDeadLetter) => ({ ...l, value: l.value === null ? null : l.value.toString('utf8') });

export async function listDeadLetters(context: CliContext, output: CliOutput, options: DeadLetterOptions): Promise<void> {
  const filter = filterOf(options);
  const { topic, ledger } = await context.deadLetters();
  const letters = await new ListDeadLetters(topic, ledger).execute(filter);
  if (options.json) return output.out(JSON.stringify(letters.map(asJson)));
  output.err(`${letters.length} dead letter(s) in ${topic.name}`);
  for (const letter of letters) output.out(describe(letter));
}

export async function showDeadLetter(context: CliContext, output: CliOutput, place: string, options: { json?: boolean }): Promise<void> {
  const filter = filterOf({}, [place]);
  const { topic, ledger } = await context.deadLetters();
  const [letter] = await new ListDeadLetters(topic, ledger).execute(filter);
  if (!letter) throw new AppError(ErrorCode.NotFound, `no dead letter at ${place} in ${topic.name}`);
  if (options.json) return output.out(JSON.stringify(asJson(letter)));
  output.out(describe(letter));
  output.out(`key: ${letter.key ?? '(none)'}`);
  output.out(`first published: ${letter.original.timestamp ? new Date(Number(letter.original.timestamp)).toISOString() : 'unknown'}`);
  output.out(
    letter.stub ? 'value: (a stub: the broker refused the letter itself, only its origin and size were kept)' : `value:\n${pretty(letter)}`,
  );
  output.err(REDACTED_NOTE);
}

export interface RedriveOptions extends DeadLetterOptions {
  all?: boolean;
  dryRun?: boolean;
  by: string;
}

export async function redriveDeadLetters(context: CliContext, output: CliOutput, places: string[], options: RedriveOptions): Promise<void> {
  const filter = filterOf(options, places);
  const { topic, ledger } = await context.deadLetters(!options.dryRun);
  const outcome = await new RedriveDeadLetters(topic, ledger).execute({
    filter,
    all: options.all === true,
    dryRun: options.dryRun === true,
    by: options.by,
  });
  output.err(REDACTED_NOTE);
  if (options.json) return output.out(JSON.stringify(outcome));
  const to = context.config.kafka.topic;
  if (options.dryRun) output.out(`would redrive ${outcome.wouldPublish.length} to ${to}: ${outcome.wouldPublish.join(' ') || '-'}`);
  else output.out(`redriven ${outcome.published.length} to ${to}: ${outcome.published.join(' ') || '-'}`);
  if (outcome.alreadyRedriven.length > 0) output.out(`already redriven, not again: ${outcome.alreadyRedriven.join(' ')}`);
  if (outcome.stubs.length > 0) output.out(`stubs, nothing to redrive: ${outcome.stubs.join(' ')}`);
}

function pretty(letter: StoredDeadLetter): string {
  const text = letter.value?.toString('utf8') ?? '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
