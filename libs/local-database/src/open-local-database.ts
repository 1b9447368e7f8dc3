import { chooseDatabase, type DatabaseSource } from './choose-database';
import { startEmbeddedPostgres } from './embedded-postgres';
import { probeLocalPostgres } from './probe-local-postgres';

export interface LocalDatabaseOptions {
  /** The variable that names a URL to use as it is (DATABASE_URL, TEST_DATABASE_URL, ...). */
  variable: string;
  configuredUrl: string | undefined;
  /** The database on the local or embedded server. */
  database: string;
  /** Where a local PostgreSQL is looked for on 127.0.0.1 (5432). */
  localPort: number;
  /** The embedded cluster's folder (data/, password, postgres.log). */
  embeddedDirectory: string;
}

export interface LocalDatabase {
  source: DatabaseSource;
  /** Which database and why, for the log. */
  reason: string;
  /** The URL to connect with (with the password, for an embedded cluster). */
  url: string;
  /** An embedded cluster's URL without its password, and the file that holds it (DATABASE_PASSWORD_FILE). */
  embedded: { urlWithoutPassword: string; passwordFile: string; logFile: string } | null;
  /** Stops what this call started (an embedded cluster); nothing otherwise. */
  stop(): Promise<void>;
}

/** The database of `npm run start:local` and of the test run: the configured one, a local one, or an embedded one started here. */
export async function openLocalDatabase(options: LocalDatabaseOptions): Promise<LocalDatabase> {
  const choice = await chooseDatabase({
    variable: options.variable,
    configuredUrl: options.configuredUrl,
    localPort: options.localPort,
    probe: () => probeLocalPostgres(options.localPort),
  });
  const nothingToStop = async () => undefined;
  switch (choice.source) {
    case 'configured':
      return { ...choice, url: options.configuredUrl!, embedded: null, stop: nothingToStop };
    case 'local':
      return {
        ...choice,
        url: `postgres://postgres@127.0.0.1:${options.localPort}/${options.database}`,
        embedded: null,
        stop: nothingToStop,
      };
    case 'embedded': {
      const cluster = await startEmbeddedPostgres(options.embeddedDirectory);
      return {
        source: choice.source,
        reason: `${choice.reason}: started an embedded PostgreSQL on 127.0.0.1:${cluster.port} with its data in ${options.embeddedDirectory}`,
        url: cluster.urlFor(options.database),
        embedded: {
          urlWithoutPassword: cluster.urlFor(options.database, { withPassword: false }),
          passwordFile: cluster.passwordFile,
          logFile: cluster.logFile,
        },
        stop: () => cluster.stop(),
      };
    }
  }
}
