import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Finds a file shipped beside the code (proto, schema) from src/ and from dist/ alike. */
export function findProjectFile(relativePath: string, from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, relativePath);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`${relativePath} not found above ${from}`);
  }
}
