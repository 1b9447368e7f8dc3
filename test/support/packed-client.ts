import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * Builds and packs @toolhistory/client as a release would (npm run
 * client:pack), and installs the tarball, with `alsoInstall`, into the
 * project folder `project`, as a user of the package would.
 */
export function installPackedClient(project: string, alsoInstall: readonly string[] = []): void {
  const packed = execFileSync('npm', ['run', '--silent', 'client:pack'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // The script prints the tarball's path as its last line.
  const tarball = packed.trim().split('\n').at(-1)!;
  execFileSync('npm', ['install', tarball, ...alsoInstall, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: project,
    stdio: 'ignore',
  });
}
