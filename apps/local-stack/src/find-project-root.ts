import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository's root (where package.json is), from src/ and from dist/ alike. */
export function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts', 'kafka-broker.sh'))) return dir;
    if (dirname(dir) === dir) throw new Error(`the repository's root is not above ${from}`);
  }
}
