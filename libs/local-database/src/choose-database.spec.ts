import { chooseDatabase, type LocalProbe } from './choose-database';

describe('chooseDatabase: the configured URL, else a local PostgreSQL without a password, else an embedded one', () => {
  const refused: LocalProbe = { answers: false, why: 'connection refused' };
  const cases: Array<{ name: string; url: string | undefined; probe: LocalProbe; source: string; reason: RegExp; probed: boolean }> = [
    {
      name: 'a URL is set',
      url: 'postgres://u@db/x',
      probe: refused,
      source: 'configured',
      reason: /^DATABASE_URL is set$/,
      probed: false,
    },
    {
      name: 'no URL, a local server lets postgres in',
      url: undefined,
      probe: { answers: true },
      source: 'local',
      reason: /not set and PostgreSQL answers on 127\.0\.0\.1:5432 as postgres without a password/,
      probed: true,
    },
    {
      name: 'an empty URL counts as none',
      url: '',
      probe: { answers: true },
      source: 'local',
      reason: /not set and PostgreSQL answers/,
      probed: true,
    },
    {
      name: 'no URL, nothing answers',
      url: undefined,
      probe: refused,
      source: 'embedded',
      reason: /no PostgreSQL answers on 127\.0\.0\.1:5432 as postgres without a password \(connection refused\)/,
      probed: true,
    },
    {
      name: 'no URL, the local server wants a password',
      url: undefined,
      probe: { answers: false, why: 'it asks for a password' },
      source: 'embedded',
      reason: /\(it asks for a password\)/,
      probed: true,
    },
  ];

  it.each(cases)('$name: $source', async ({ url, probe, source, reason, probed }) => {
    let asked = false;
    const choice = await chooseDatabase({
      variable: 'DATABASE_URL',
      configuredUrl: url,
      localPort: 5432,
      probe: async () => {
        asked = true;
        return probe;
      },
    });
    expect(choice.source).toBe(source);
    expect(choice.reason).toMatch(reason);
    expect(asked).toBe(probed);
  });
});
