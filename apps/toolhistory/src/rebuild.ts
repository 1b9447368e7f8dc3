import { loadConfig } from '@toolhistory/config';
import { exitCodeOf } from './cli/exit-codes';
import { rebuildDatabase } from './operations/rebuild-database';

/** `npm run rebuild` (also `toolhistory rebuild`). */
rebuildDatabase(loadConfig(process.env), (line) => process.stdout.write(`${line}\n`)).catch((error) => {
  process.stderr.write(`rebuild failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(exitCodeOf(error));
});
