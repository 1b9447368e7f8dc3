import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_TABLE_END, CONFIG_TABLE_START, renderConfigTable, spliceConfigTable } from './config-docs';
import { filePath, isRefused, nonEmpty } from './parsers';
import { readSettings } from './read-settings';
import { CONFIG_DEFAULTS, ENVIRONMENT_VARIABLE_NAMES, type Setting, SETTING_GROUPS, type SettingName, SETTINGS } from './settings';

const table: readonly Setting[] = SETTINGS;

/** What one variable set to `text` reads as: its value, or its problem (the whole sentence). */
function read(name: SettingName, text: string): { value: unknown } | { problem: string } {
  const { values, problems } = readSettings({ [name]: text });
  return problems.length > 0 ? { problem: problems.join('; ') } : { value: values[name] };
}

describe('the settings table', () => {
  it('names each variable once, in UPPER_SNAKE_CASE', () => {
    const names = table.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
    expect(ENVIRONMENT_VARIABLE_NAMES).toEqual(names);
  });

  it.each(table.filter((s) => s.default !== undefined).map((s) => [s.name, s] as const))(
    'the default of %s passes its own parser',
    (_, setting) => {
      expect(isRefused(setting.parse(setting.default!))).toBe(false);
    },
  );

  it('gives each variable a group, one line of description, and a fixed default or a note on what unset means (not both)', () => {
    for (const s of table) {
      expect(Object.keys(SETTING_GROUPS)).toContain(s.group);
      expect(s.description).toMatch(/^\S[^\n]*$/);
      expect(s.default !== undefined && s.whenUnset !== undefined).toBe(false);
    }
    for (const group of Object.keys(SETTING_GROUPS)) expect(table.some((s) => s.group === group)).toBe(true);
  });

  it('exports the defaults as text', () => {
    expect(CONFIG_DEFAULTS).toMatchObject({ GRPC_PORT: '50051', MAX_EVENT_BYTES: '1048576', GRPC_MAX_REQUEST_BYTES: '65536' });
    expect(Object.keys(CONFIG_DEFAULTS)).toEqual(table.filter((s) => s.default !== undefined).map((s) => s.name));
  });
});

/** Per parser, through a variable that uses it: texts it takes (with their values) and texts it refuses (with the exact problem). */
const PARSER_CASES: Array<{
  parser: string;
  variable: SettingName;
  valid: Array<[string, unknown]>;
  invalid: Array<[string, string]>;
}> = [
  {
    parser: 'hostPortList',
    variable: 'KAFKA_BROKERS',
    valid: [
      ['k1:9092', ['k1:9092']],
      ['k1:9092,10.0.0.2:9093', ['k1:9092', '10.0.0.2:9093']],
    ],
    invalid: ['no-port', 'k1:9092,', 'k1:9092, k2:9093', 'k1:123456', ':9092'].map((t) => [
      t,
      'KAFKA_BROKERS must be a comma-separated list of host:port',
    ]),
  },
  { parser: 'nonEmpty', variable: 'KAFKA_CLIENT_ID', valid: [['svc', 'svc']], invalid: [] },
  {
    parser: 'topicName',
    variable: 'TOOL_EVENTS_TOPIC',
    valid: [
      ['events.v1', 'events.v1'],
      ['A_b-9', 'A_b-9'],
    ],
    invalid: ['events/v1', 'a b', 'a'.repeat(201)].map((t) => [
      t,
      'TOOL_EVENTS_TOPIC must be a Kafka topic name (letters, digits, ".", "_", "-")',
    ]),
  },
  {
    parser: 'positiveInt',
    variable: 'TOOL_EVENTS_PARTITIONS',
    valid: [
      ['1', 1],
      ['12', 12],
    ],
    invalid: ['0', '-1', '01', '1.5', '1e3', 'lots'].map((t) => [t, 'TOOL_EVENTS_PARTITIONS must be a positive integer']),
  },
  {
    parser: 'wholeMillis',
    variable: 'GRPC_SHUTDOWN_GRACE_MS',
    valid: [
      ['0', 0],
      ['2500', 2500],
    ],
    invalid: ['-1', '1.5', '10s'].map((t) => [t, 'GRPC_SHUTDOWN_GRACE_MS must be a whole number of milliseconds']),
  },
  {
    parser: 'wholeMillis with a note',
    variable: 'DATABASE_STATEMENT_TIMEOUT_MS',
    valid: [['0', 0]],
    invalid: [['30s', 'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds (0: none)']],
  },
  {
    parser: 'wholeMillis with a note',
    variable: 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS',
    valid: [['60000', 60000]],
    invalid: [['-5', 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds (0: none)']],
  },
  {
    parser: 'wholeNumber',
    variable: 'REPLAY_CACHE_MB',
    valid: [
      ['0', 0],
      ['64', 64],
    ],
    invalid: ['-1', '0.5', 'big'].map((t) => [t, 'REPLAY_CACHE_MB must be a whole number (0 disables the cache)']),
  },
  ...(['ADMISSION_REPLAY_MAX_QUEUED', 'ADMISSION_AUDIT_MAX_QUEUED'] as const).map((variable) => ({
    parser: 'wholeNumber with a note',
    variable,
    valid: [
      ['0', 0],
      ['128', 128],
    ] as Array<[string, unknown]>,
    invalid: [['-1', `${variable} must be a whole number (0: none waits)`]] as Array<[string, string]>,
  })),
  {
    parser: 'wholeNumber with a note',
    variable: 'GC_BUSY_HEAP_GROWING_PERCENT',
    valid: [
      ['0', 0],
      ['100', 100],
    ],
    invalid: ['-1', '1.5', 'half'].map((t) => [t, "GC_BUSY_HEAP_GROWING_PERCENT must be a whole number (0: V8's own, busy or not)"]),
  },
  {
    parser: 'wholeNumber with a note',
    variable: 'GC_CALLS_PER_FULL_COLLECTION',
    valid: [
      ['0', 0],
      ['20000', 20_000],
    ],
    invalid: [['-5', 'GC_CALLS_PER_FULL_COLLECTION must be a whole number (0: V8 alone decides)']],
  },
  {
    parser: 'wholeNumber with a note',
    variable: 'ADMISSION_METRICS_TENANTS',
    valid: [['0', 0]],
    invalid: [['many', 'ADMISSION_METRICS_TENANTS must be a whole number (0: none by name)']],
  },
  {
    parser: 'wholeMillis with a note',
    variable: 'ADMISSION_SEARCH_HOLD_MS',
    valid: [
      ['0', 0],
      ['30000', 30_000],
    ],
    invalid: [['30s', 'ADMISSION_SEARCH_HOLD_MS must be a whole number of milliseconds (0: search never holds)']],
  },
  ...(['ADMISSION_REPLAY_MAX_QUEUE_WAIT_MS', 'ADMISSION_AUDIT_MAX_QUEUE_WAIT_MS'] as const).map((variable) => ({
    parser: 'wholeMillis',
    variable,
    valid: [['100', 100]] as Array<[string, unknown]>,
    invalid: [['0.1s', `${variable} must be a whole number of milliseconds`]] as Array<[string, string]>,
  })),
  {
    parser: 'port',
    variable: 'GRPC_PORT',
    valid: [
      ['1', 1],
      ['6000', 6000],
      ['65535', 65535],
    ],
    invalid: [
      ['0', 'GRPC_PORT must be a port number'],
      ['08080', 'GRPC_PORT must be a port number'],
      ['http', 'GRPC_PORT must be a port number'],
      ['65536', 'GRPC_PORT must be between 1 and 65535'],
      ['99999999999999999999', 'GRPC_PORT must be between 1 and 65535'],
    ],
  },
  {
    parser: 'portOrZero',
    variable: 'HTTP_PORT',
    valid: [
      ['0', 0],
      ['9464', 9464],
      ['65535', 65535],
    ],
    invalid: [
      ['65536', 'HTTP_PORT must be between 0 and 65535'],
      ['99999', 'HTTP_PORT must be between 0 and 65535'],
      ['123456', 'HTTP_PORT must be a port number (0: any free port)'],
      ['metrics', 'HTTP_PORT must be a port number (0: any free port)'],
    ],
  },
  {
    parser: 'boolean',
    variable: 'MIGRATE_ON_START',
    valid: [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ],
    invalid: ['yes', 'TRUE', 'off'].map((t) => [t, 'MIGRATE_ON_START must be true or false']),
  },
  {
    parser: 'boolean',
    variable: 'GC_PRETENURING',
    valid: [
      ['true', true],
      ['false', false],
    ],
    invalid: [['no', 'GC_PRETENURING must be true or false']],
  },
  {
    parser: 'oneOf',
    variable: 'EVENT_STORE',
    valid: [
      ['postgres', 'postgres'],
      ['eventstoredb', 'eventstoredb'],
    ],
    invalid: ['mongodb', 'Postgres'].map((t) => [t, 'EVENT_STORE must be one of: postgres, eventstoredb']),
  },
  {
    parser: 'oneOf',
    variable: 'KAFKA_SASL_MECHANISM',
    valid: [['scram-sha-512', 'scram-sha-512']],
    invalid: [['gssapi', 'KAFKA_SASL_MECHANISM must be one of: plain, scram-sha-256, scram-sha-512']],
  },
  {
    parser: 'oneOf',
    variable: 'AUTH_MODE',
    valid: [
      ['jwt', 'jwt'],
      ['none', 'none'],
    ],
    invalid: [['sometimes', 'AUTH_MODE must be one of: jwt, none']],
  },
  {
    parser: 'oneOf with its own lead',
    variable: 'LOG_LEVEL',
    valid: [['debug', 'debug']],
    invalid: [['loud', 'LOG_LEVEL must be one of the following values: fatal, error, warn, info, debug, trace, silent']],
  },
  {
    parser: 'listOf',
    variable: 'SERVICE_ROLES',
    valid: [
      ['grpc', ['grpc']],
      ['grpc,recorder,grpc', ['grpc', 'recorder']],
    ],
    invalid: ['recorder,web', 'recorder,', 'recorder, grpc', 'everything'].map((t) => [
      t,
      'SERVICE_ROLES must be a comma-separated list of: recorder, grpc',
    ]),
  },
  {
    parser: 'identifier',
    variable: 'DATABASE_SCHEMA',
    valid: [
      ['th', 'th'],
      ['_t1', '_t1'],
    ],
    invalid: ['Public', '1abc', 'my-schema', 'a'.repeat(64)].map((t) => [t, 'DATABASE_SCHEMA must be a lower-case SQL identifier']),
  },
  {
    parser: 'postgresUrl',
    variable: 'DATABASE_URL',
    valid: [
      ['postgresql://u@db:5432/x', 'postgresql://u@db:5432/x'],
      ['postgres://db/x?sslmode=verify-full', 'postgres://db/x?sslmode=verify-full'],
    ],
    invalid: ['mysql://x', 'postgres://', 'postgres://a b'].map((t) => [t, 'DATABASE_URL must be a postgres:// URL']),
  },
  {
    parser: 'eventStoreUrl',
    variable: 'EVENTSTORE_URL',
    valid: ['kurrentdb://127.0.0.1:2113?tls=false', 'kurrentdb+discover://cluster:2113', 'esdb://127.0.0.1:2113'].map((t) => [t, t]),
    invalid: ['http://127.0.0.1:2113', 'kurrentdb:/x'].map((t) => [
      t,
      'EVENTSTORE_URL must be a kurrentdb:// or kurrentdb+discover:// connection string (esdb:// is still read)',
    ]),
  },
  {
    parser: 'httpUrl',
    variable: 'AUTH_JWKS_URL',
    valid: ['https://idp.example/jwks', 'http://127.0.0.1:8080/jwks'].map((t) => [t, t]),
    invalid: ['ftp://idp.example/jwks', 'idp.example/jwks'].map((t) => [t, 'AUTH_JWKS_URL must be an https:// URL']),
  },
  {
    parser: 'httpUrl',
    variable: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    valid: [['http://collector:4318', 'http://collector:4318']],
    invalid: [['collector:4318', "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (the collector's OTLP/HTTP base)"]],
  },
  {
    parser: 'host',
    variable: 'GRPC_HOST',
    valid: ['0.0.0.0', '::', '[::1]', 'localhost', 'svc-1.internal'].map((t) => [t, t]),
    invalid: ['bad host', '-svc', 'svc_1', 'svc.'].map((t) => [t, 'GRPC_HOST must be an IP address or a host name']),
  },
  {
    parser: 'serviceName',
    variable: 'OTEL_SERVICE_NAME',
    valid: [['toolhistory-eu_1.a', 'toolhistory-eu_1.a']],
    invalid: ['tool history', 'a'.repeat(65)].map((t) => [
      t,
      'OTEL_SERVICE_NAME must be 1 to 64 letters, digits, dots, dashes or underscores',
    ]),
  },
  {
    parser: 'oneOf',
    variable: 'ENCRYPTION_AT_REST',
    valid: [
      ['on', 'on'],
      ['off', 'off'],
    ],
    invalid: [['no', 'ENCRYPTION_AT_REST must be one of: on, off']],
  },
  {
    parser: 'keyStoreUrl',
    variable: 'KEYSTORE_URL',
    valid: ['postgres://keys.internal/toolhistory_keys', 'file:///var/lib/toolhistory/keys'].map((t) => [t, t]),
    invalid: ['file://relative/keys', 'mysql://x', '/var/lib/keys'].map((t) => [
      t,
      'KEYSTORE_URL must be a postgres:// URL (a database apart from the payloads) or a file:/// path (a directory)',
    ]),
  },
  {
    parser: 'duration',
    variable: 'RETENTION_SWEEP_INTERVAL',
    valid: [
      ['1m', 60_000],
      ['30s', 30_000],
      ['250ms', 250],
      ['2h', 7_200_000],
    ],
    invalid: ['0s', '1', '1d', '1.5m', ' m'].map((t) => [
      t,
      'RETENTION_SWEEP_INTERVAL must be a duration such as 30s, 1m or 1h (ms, s, m, h)',
    ]),
  },
  { parser: 'filePath', variable: 'POLICY_FILE', valid: [['/etc/toolhistory/policy.json', '/etc/toolhistory/policy.json']], invalid: [] },
  { parser: 'text', variable: 'AUTH_ISSUER', valid: [['https://idp.example', 'https://idp.example']], invalid: [] },
];

describe('parsers', () => {
  const valid = PARSER_CASES.flatMap(({ parser, variable, valid }) =>
    valid.map(([text, value]) => [parser, variable, text, value] as const),
  );
  const invalid = PARSER_CASES.flatMap(({ parser, variable, invalid }) =>
    invalid.map(([text, problem]) => [parser, variable, text, problem] as const),
  );

  it.each(valid)('%s: %s=%j is taken', (_, variable, text, value) => {
    expect(read(variable, text)).toEqual({ value });
  });

  it.each(invalid)('%s: %s=%j is refused', (_, variable, text, problem) => {
    expect(read(variable, text)).toEqual({ problem });
  });

  it('have cases for every parser the table uses', () => {
    const tried = new Set(PARSER_CASES.map((c) => table.find((s) => s.name === c.variable)?.parse));
    expect(table.filter((s) => !tried.has(s.parse)).map((s) => s.name)).toEqual([]);
  });

  it('say so when a name or a path is empty, which the environment cannot be (empty is unset)', () => {
    expect(nonEmpty('')).toEqual({ problem: 'must not be empty' });
    expect(filePath('')).toEqual({ problem: 'must not be empty when set' });
    expect(readSettings({ KAFKA_CLIENT_ID: '  ', POLICY_FILE: '' })).toMatchObject({
      values: { KAFKA_CLIENT_ID: 'toolhistory', POLICY_FILE: undefined },
      given: {},
      problems: [],
    });
  });
});

describe('readSettings', () => {
  it('gives every variable its default, or undefined, for an empty environment', () => {
    const { values, given, problems } = readSettings({});
    expect(problems).toEqual([]);
    expect(given).toEqual({});
    expect(values).toMatchObject({ KAFKA_BROKERS: ['127.0.0.1:9092'], KAFKA_SSL: false, MIGRATE_ON_START: true, HTTP_PORT: 9464 });
    expect(values.GRPC_HOST).toBeUndefined();
    expect(Object.keys(values)).toEqual(ENVIRONMENT_VARIABLE_NAMES);
  });

  it('trims the text, and ignores variables it does not know', () => {
    expect(readSettings({ GRPC_PORT: ' 6000\n', UNKNOWN: 'x' })).toMatchObject({
      values: { GRPC_PORT: 6000 },
      given: { GRPC_PORT: '6000' },
    });
  });

  it("lists one problem per refused variable, in the table's order; a refused value reads as its default but is still given", () => {
    const { values, given, problems } = readSettings({ LOG_LEVEL: 'loud', GRPC_PORT: '0', KAFKA_BROKERS: 'x', AUTH_JWKS_URL: 'ftp://k' });
    expect(problems).toEqual([
      'KAFKA_BROKERS must be a comma-separated list of host:port',
      'GRPC_PORT must be a port number',
      'AUTH_JWKS_URL must be an https:// URL',
      'LOG_LEVEL must be one of the following values: fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(values).toMatchObject({ KAFKA_BROKERS: ['127.0.0.1:9092'], GRPC_PORT: 50051, LOG_LEVEL: 'info' });
    expect(values.AUTH_JWKS_URL).toBeUndefined();
    expect(given).toEqual({ LOG_LEVEL: 'loud', GRPC_PORT: '0', KAFKA_BROKERS: 'x', AUTH_JWKS_URL: 'ftp://k' });
  });
});

describe('the reference in docs/configuration.md', () => {
  const rendered = renderConfigTable();

  it('lists every variable once, under the heading of its group, with its default', () => {
    for (const s of table) {
      const rows = rendered.split('\n').filter((line) => line.startsWith(`| \`${s.name}\` |`));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain(s.default === undefined ? (s.whenUnset ?? '| unset |') : `| \`${s.default}\` |`);
      const heading = rendered.lastIndexOf('\n### ', rendered.indexOf(rows[0]));
      expect(rendered.slice(heading + 5, rendered.indexOf('\n', heading + 1))).toBe(SETTING_GROUPS[s.group]);
    }
  });

  it('escapes what would end a cell', () => {
    const row = renderConfigTable([{ name: 'X_Y', group: 'process', parse: nonEmpty, description: 'a | b' }]);
    expect(row).toContain('| `X_Y` | unset | a \\| b |');
  });

  it('replaces what stands between the markers only, the same every time', () => {
    const page = `# Title\n\nprose\n\n${CONFIG_TABLE_START}\nold\n${CONFIG_TABLE_END}\n\nmore prose\n`;
    const once = spliceConfigTable(page, 'TABLE');
    expect(once).toBe(`# Title\n\nprose\n\n${CONFIG_TABLE_START}\n\nTABLE\n\n${CONFIG_TABLE_END}\n\nmore prose\n`);
    expect(spliceConfigTable(once, 'TABLE')).toBe(once);
    expect(() => spliceConfigTable('# no markers', 'TABLE')).toThrow(/config-table:start/);
    expect(() => spliceConfigTable(`${CONFIG_TABLE_END}\n${CONFIG_TABLE_START}`, 'TABLE')).toThrow();
  });

  it('is current (npm run config:generate)', () => {
    const page = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(spliceConfigTable(page, rendered)).toBe(page);
  });
});
