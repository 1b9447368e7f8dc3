/**
 * Where a developer's database comes from, in order: the URL the environment
 * names; else a PostgreSQL that already answers on loopback as `postgres`
 * without a password; else an embedded PostgreSQL the tools start themselves.
 */
export type DatabaseSource = 'configured' | 'local' | 'embedded';

export type LocalProbe = { answers: true } | { answers: false; why: string };

export interface DatabaseChoice {
  source: DatabaseSource;
  /** One sentence for the log: which database, and why that one. */
  reason: string;
}

export interface ChoiceInput {
  /** The variable that may name a URL (DATABASE_URL, TEST_DATABASE_URL, ...). */
  variable: string;
  configuredUrl: string | undefined;
  localPort: number;
  /** Asked only when no URL is configured. */
  probe: () => Promise<LocalProbe>;
}

export async function chooseDatabase(input: ChoiceInput): Promise<DatabaseChoice> {
  if (input.configuredUrl !== undefined && input.configuredUrl !== '') {
    return { source: 'configured', reason: `${input.variable} is set` };
  }
  const local = `127.0.0.1:${input.localPort}`;
  const probe = await input.probe();
  if (probe.answers) {
    return { source: 'local', reason: `${input.variable} is not set and PostgreSQL answers on ${local} as postgres without a password` };
  }
  return {
    source: 'embedded',
    reason: `${input.variable} is not set and no PostgreSQL answers on ${local} as postgres without a password (${probe.why})`,
  };
}
