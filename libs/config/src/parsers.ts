/**
 * Small named parsers for the environment's strings. Each turns the text of
 * one variable (trimmed, never empty: an empty variable is unset) into its
 * typed value, or says what is wrong with it. The problem is the rest of a
 * sentence whose subject is the variable: `must be a positive integer`
 * becomes `TOOL_EVENTS_PARTITIONS must be a positive integer`.
 */
export type Parsed<T> = { readonly value: T } | { readonly problem: string };

export type Parser<T> = (text: string) => Parsed<T>;

export const isRefused = <T>(parsed: Parsed<T>): parsed is { readonly problem: string } => 'problem' in parsed;

const accept = <T>(value: T): Parsed<T> => ({ value });
const refuse = (problem: string): Parsed<never> => ({ problem });

/** The text itself, when it matches `pattern`. */
const textMatching =
  (pattern: RegExp, problem: string): Parser<string> =>
  (text) =>
    pattern.test(text) ? accept(text) : refuse(problem);

const HOST_NAME_OR_IP = /^(\[?[0-9a-fA-F:.]+\]?|[a-zA-Z0-9]([a-zA-Z0-9.-]{0,251}[a-zA-Z0-9])?)$/;

/** Any text: a name, a user, an issuer. */
export const text: Parser<string> = accept;

/** Any text; says so when empty (which the environment cannot be: an empty variable is unset). */
export const nonEmpty: Parser<string> = (value) => (value.length > 0 ? accept(value) : refuse('must not be empty'));

/** The path of a file, read once at boot by the rule that needs it. */
export const filePath: Parser<string> = (value) => (value.length > 0 ? accept(value) : refuse('must not be empty when set'));

/** 1, 2, 3, ... (no sign, no leading zero). */
export const positiveInt: Parser<number> = (value) =>
  /^[1-9]\d*$/.test(value) ? accept(Number(value)) : refuse('must be a positive integer');

const whole =
  (problem: string): Parser<number> =>
  (value) =>
    /^\d+$/.test(value) ? accept(Number(value)) : refuse(problem);
const withNote = (problem: string, note: string | undefined): string => (note === undefined ? problem : `${problem} (${note})`);

/** 0, 1, 2, ...; `note` says what 0 means. */
export const wholeNumber = (note?: string): Parser<number> => whole(withNote('must be a whole number', note));

/** A duration in milliseconds, 0 included; `note` says what 0 means. */
export const wholeMillis = (note?: string): Parser<number> => whole(withNote('must be a whole number of milliseconds', note));

/** A port to listen on, 1 to 65535. */
export const port: Parser<number> = (value) => {
  if (!/^[1-9]\d*$/.test(value)) return refuse('must be a port number');
  const number = Number(value);
  return number <= 65535 ? accept(number) : refuse('must be between 1 and 65535');
};

/** A port to listen on, 0 to 65535; 0 lets the system pick a free one. */
export const portOrZero: Parser<number> = (value) => {
  if (!/^\d{1,5}$/.test(value)) return refuse('must be a port number (0: any free port)');
  const number = Number(value);
  return number <= 65535 ? accept(number) : refuse('must be between 0 and 65535');
};

/** `true`, `false`, `1` or `0`. */
export const boolean: Parser<boolean> = (value) =>
  /^(true|false|1|0)$/.test(value) ? accept(value === 'true' || value === '1') : refuse('must be true or false');

/** `host:port,host:port`, as a list. */
export const hostPortList: Parser<string[]> = (value) =>
  /^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/.test(value) ? accept(value.split(',')) : refuse('must be a comma-separated list of host:port');

/**
 * One of `choices`. `lead` words the problem (`must be one of:`, then the
 * choices), so that a message operators already know stays as it is.
 */
export const oneOf =
  <const T extends string>(choices: readonly T[], lead = 'must be one of:'): Parser<T> =>
  (value) =>
    choices.includes(value as T) ? accept(value as T) : refuse(`${lead} ${choices.join(', ')}`);

/** A comma-separated list of `choices`, each kept once, in the order given. */
export const listOf =
  <const T extends string>(choices: readonly T[]): Parser<T[]> =>
  (value) => {
    const items = value.split(',');
    return items.every((item) => choices.includes(item as T))
      ? accept([...new Set(items as T[])])
      : refuse(`must be a comma-separated list of: ${choices.join(', ')}`);
  };

/** A lower-case SQL identifier that needs no quoting (a schema name). */
export const identifier = textMatching(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier');

/** A Kafka topic name. */
export const topicName = textMatching(/^[a-zA-Z0-9._-]{1,200}$/, 'must be a Kafka topic name (letters, digits, ".", "_", "-")');

/** A `postgres://` or `postgresql://` connection URL. */
export const postgresUrl = textMatching(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL');

/** A connection string the EventStoreDB client reads (KurrentDB servers take the same strings). */
export const eventStoreUrl = textMatching(
  /^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\/\S+$/,
  'must be a kurrentdb:// or kurrentdb+discover:// connection string (esdb:// is still read)',
);

/** An `http://` or `https://` URL; `problem` says which the variable wants. */
export const httpUrl = (problem: string): Parser<string> => textMatching(/^https?:\/\/\S+$/, problem);

/** An address to listen on: an IPv4 or IPv6 address, or a host name. */
export const host = textMatching(HOST_NAME_OR_IP, 'must be an IP address or a host name');

/** A service name, as tracing backends show it. */
export const serviceName = textMatching(/^[\w.-]{1,64}$/, 'must be 1 to 64 letters, digits, dots, dashes or underscores');

/** Where the key store lives: a `postgres://` URL (a database of its own) or a `file:///` directory. */
export const keyStoreUrl = textMatching(
  /^(postgres(ql)?:\/\/\S+|file:\/\/\/\S*)$/,
  'must be a postgres:// URL (a database apart from the payloads) or a file:/// path (a directory)',
);

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A positive duration with its unit: `500ms`, `30s`, `1m`, `2h`; in milliseconds. */
export const duration: Parser<number> = (value) => {
  const match = /^([1-9]\d{0,8})(ms|s|m|h)$/.exec(value);
  return match ? accept(Number(match[1]) * DURATION_UNITS_MS[match[2]]) : refuse('must be a duration such as 30s, 1m or 1h (ms, s, m, h)');
};
