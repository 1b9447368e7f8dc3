import { isAbsolute, join } from 'node:path';

/** The settings of the developer tools that open a database (`npm run start:local`, the test run, the benchmarks). */
export interface LocalSettings {
  /** LOCAL_POSTGRES_PORT: where a PostgreSQL already running is looked for on 127.0.0.1 (5432). */
  localPostgresPort: number;
  /** EMBEDDED_POSTGRES_DIR: the embedded clusters' folder (.cache/postgres in the repository), one subfolder each. */
  embeddedPostgresDir: string;
}

export const LOCAL_SETTINGS_HELP = {
  LOCAL_POSTGRES_PORT: 'port on 127.0.0.1 where a running PostgreSQL is looked for (default 5432)',
  EMBEDDED_POSTGRES_DIR: "folder of the embedded PostgreSQL's clusters (default .cache/postgres)",
} as const;

/** Reads the settings, naming every problem at once. */
export function readLocalSettings(env: NodeJS.ProcessEnv, projectRoot: string): LocalSettings {
  const problems: string[] = [];
  const portText = env.LOCAL_POSTGRES_PORT ?? '5432';
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535)
    problems.push(`LOCAL_POSTGRES_PORT must be a port number (1-65535), not "${portText}"`);
  const dir = env.EMBEDDED_POSTGRES_DIR ?? join(projectRoot, '.cache', 'postgres');
  if (dir.trim() === '') problems.push('EMBEDDED_POSTGRES_DIR must not be empty when set');
  if (problems.length > 0) throw new Error(`invalid settings: ${problems.join('; ')}`);
  return { localPostgresPort: port, embeddedPostgresDir: isAbsolute(dir) ? dir : join(projectRoot, dir) };
}
