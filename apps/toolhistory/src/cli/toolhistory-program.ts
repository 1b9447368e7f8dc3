import { Command, Option } from 'commander';
import { type AppConfig } from '@toolhistory/config';
import { migrateDatabase } from '../operations/migrate-database';
import { rebuildDatabase } from '../operations/rebuild-database';
import { CliContext, type CliOutput } from './cli-context';
import { eraseConversation, forkConversation, REPLAY_FORMAT_NAMES, replayConversation } from './conversation-commands';
import { listDeadLetters, redriveDeadLetters, showDeadLetter } from './dead-letter-commands';
import { retentionStatus, rotateKeys } from './key-commands';

export interface ProgramSettings {
  /** Loaded when a command runs (help and usage errors need no configuration). */
  config: () => AppConfig;
  output: CliOutput;
  /** Who runs the command, recorded with each redrive. */
  operator: string;
  version: string;
}

/**
 * `toolhistory`: the operator's commands, on the service's own
 * configuration (the same environment variables). Each command opens what
 * it needs and closes it before returning.
 */
export function toolhistoryProgram(settings: ProgramSettings): Command {
  const { output } = settings;
  const run =
    <A extends unknown[]>(command: (context: CliContext, ...args: A) => Promise<void>) =>
    async (...args: A) => {
      const context = new CliContext(settings.config());
      try {
        await command(context, ...args);
      } finally {
        await context.close();
      }
    };

  const program = new Command('toolhistory')
    .description(
      'Operate toolhistory: dead letters, replay as the model sees it, erasure, forks, keys and retention, rebuild and migrations.',
    )
    .version(settings.version)
    .configureOutput({ writeOut: (s) => output.out(s.trimEnd()), writeErr: (s) => output.err(s.trimEnd()) })
    .showHelpAfterError()
    .exitOverride();

  const dlq = program.command('dlq').description('the dead-letter topic: list, show and redrive what the recorder set aside');
  const filterOptions = (command: Command) =>
    command
      .option('--code <code...>', 'only these error codes (e.g. INVALID_EVENT NOT_JSON)')
      .option('--since <time>', 'only letters dead-lettered at or after this ISO 8601 time')
      .option('--partition <n>', 'only this partition of the dead-letter topic')
      .option('--json', 'one JSON document instead of lines');
  filterOptions(dlq.command('list').description('list dead letters: place (partition:offset), time, error code, origin, reason')).action(
    run((context, options) => listDeadLetters(context, output, options)),
  );
  dlq
    .command('show')
    .description('one dead letter with its headers and (redacted) value')
    .argument('<place>', 'partition:offset in the dead-letter topic')
    .option('--json', 'one JSON document')
    .action(run((context, place: string, options) => showDeadLetter(context, output, place, options)));
  filterOptions(
    dlq
      .command('redrive')
      .description('publish selected dead letters to the events topic again, after a fix; each at most once')
      .argument('[places...]', 'partition:offset of each letter (or select with the options)')
      .option('--all', 'every letter, when no place or filter is given')
      .option('--dry-run', 'say what would be redriven, publish nothing')
      .option('--by <name>', 'who redrives, kept with each redrive', settings.operator),
  ).action(run((context, places: string[], options) => redriveDeadLetters(context, output, places, options)));

  program
    .command('replay')
    .description('the history a model would get at the start of a turn, and each call left out with its reason')
    .argument('<tenant>', 'tenant id')
    .argument('<conversation>', 'conversation id')
    .addOption(new Option('--format <format>', 'provider format').choices(REPLAY_FORMAT_NAMES).default('openai'))
    .option('--as-of <time>', 'as it was at this ISO 8601 time (default: now)')
    .option('--channel <channel>', "apply this channel's policy instead of the conversation's")
    .option('--max-history-tokens <n>', "token budget, instead of the policy's")
    .option('--json', 'the whole history as one JSON document')
    .action(
      run((context, tenant: string, conversation: string, options) => replayConversation(context, output, tenant, conversation, options)),
    );

  program
    .command('erase')
    .description('erase a conversation: its events and every row made from them (cannot be undone)')
    .argument('<tenant>', 'tenant id')
    .argument('<conversation>', 'conversation id')
    .option('--yes', 'mean it')
    .action(
      run((context, tenant: string, conversation: string, options) => eraseConversation(context, output, tenant, conversation, options)),
    );

  program
    .command('fork')
    .description("copy a conversation's history up to a message into a new conversation (the source is unchanged)")
    .argument('<tenant>', 'tenant id')
    .argument('<conversation>', 'the source conversation id')
    .requiredOption('--up-to <message>', 'a user or assistant message of the source: its run is the last copied')
    .requiredOption('--to <conversation>', 'the new conversation id')
    .action(
      run((context, tenant: string, conversation: string, options) => forkConversation(context, output, tenant, conversation, options)),
    );

  const keys = program.command('keys').description('the key-encryption keys that wrap the data keys of payloads at rest');
  keys
    .command('rotate')
    .description("wrap every data key again with the keyring's active key (payloads untouched); then the old keys may leave the keyring")
    .action(run((context) => rotateKeys(context, output)));

  program
    .command('retention')
    .description('payloads past their retention: what is due and what comes next')
    .command('status')
    .description("the policy's retention, the payloads and data keys due now, and the next to expire")
    .option('--json', 'one JSON document')
    .action(run((context, options) => retentionStatus(context, output, options)));

  program
    .command('rebuild')
    .description('rebuild the read model from the event store and swap it in; running services keep answering')
    .action(run((context) => rebuildDatabase(context.config, output.out)));

  program
    .command('migrate')
    .description('create the database if needed and apply pending migrations')
    .action(run(async (context) => output.out(await migrateDatabase(context.config))));

  return program;
}
