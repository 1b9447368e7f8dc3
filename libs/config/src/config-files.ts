import { readFileSync } from 'node:fs';

/** How configuration reads the files it names; tests pass their own. */
export type ReadConfigFile = (path: string) => Buffer;

export const readConfigFileFromDisk: ReadConfigFile = (path) => readFileSync(path);

/**
 * Reads each named file once, at boot. A file that cannot be read becomes a
 * problem naming the variable, the path and the reason, listed with the rest.
 */
export class ConfigFiles {
  constructor(
    private readonly read: ReadConfigFile,
    private readonly problems: string[],
  ) {}

  bytes(variable: string, path: string | undefined): Buffer | null {
    if (path === undefined) return null;
    try {
      const content = this.read(path);
      if (content.length === 0) {
        this.problems.push(`${variable}: ${path} is empty`);
        return null;
      }
      return content;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
      this.problems.push(`${variable}: cannot read ${path} (${code})`);
      return null;
    }
  }

  /** A secret kept in a file, as written by `echo secret > file`: one trailing line break is not part of it. */
  text(variable: string, path: string | undefined): string | null {
    const content = this.bytes(variable, path);
    if (content === null) return null;
    const text = content.toString('utf8').replace(/\r?\n$/, '');
    if (text === '') this.problems.push(`${variable}: ${path} holds only a line break`);
    return text === '' ? null : text;
  }
}
