import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

let packed: string | undefined;

/** Builds and packs @toolhistory/client as a release would (npm run client:pack), once per test file; the tarball's path. */
export function packClient(): string {
  if (packed !== undefined) return packed;
  const output = execFileSync('npm', ['run', '--silent', 'client:pack'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // The script prints the tarball's path as its last line.
  packed = output.trim().split('\n').at(-1)!;
  return packed;
}

/**
 * Installs the packed client, with `alsoInstall`, into the project folder
 * `project`, as a user of the package would. A failed install throws with
 * npm's own account of it (an ERESOLVE names the peer ranges that clash).
 */
export function installPackedClient(project: string, alsoInstall: readonly string[] = [], npmOptions: readonly string[] = []): void {
  execFileSync('npm', ['install', packClient(), ...alsoInstall, '--no-audit', '--no-fund', '--loglevel=error', ...npmOptions], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}
