import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The e2e tier runs the built service; `npm run test:e2e` builds it first. */
export function assertServiceBuilt(): void {
  const main = resolve(__dirname, '../../dist/apps/toolhistory/src/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` before the e2e tests`);
}
