#!/usr/bin/env node
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { CommanderError } from 'commander';
import { loadConfig } from '@toolhistory/config';
import { AppError } from '@toolhistory/errors';
import { EXIT, exitCodeOf } from './cli/exit-codes';
import { toolhistoryProgram } from './cli/toolhistory-program';
import { findProjectFile } from './find-project-file';

/** `toolhistory` (package.json bin; `npx toolhistory`): the operator's command line. */
async function main(): Promise<void> {
  const output = { out: (text: string) => process.stdout.write(`${text}\n`), err: (text: string) => process.stderr.write(`${text}\n`) };
  const operator = process.env.TOOLHISTORY_OPERATOR ?? safeUserName();
  const { version } = JSON.parse(readFileSync(findProjectFile('package.json'), 'utf8')) as { version: string };
  const program = toolhistoryProgram({ config: () => loadConfig(process.env), output, operator, version });
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end here too, with code 0; usage mistakes were already explained.
      process.exitCode = error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      return;
    }
    output.err(`toolhistory: ${error instanceof AppError || error instanceof Error ? error.message : String(error)}`);
    process.exitCode = exitCodeOf(error);
  }
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'operator';
  }
}

void main();
