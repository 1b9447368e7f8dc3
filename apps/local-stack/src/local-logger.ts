import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

let logger: Logger | undefined;

/** The launcher's own lines: readable on a terminal, JSON otherwise, like the service's. */
export function localLogger(): Logger {
  logger ??= pino(
    { base: { service: 'start:local' }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    process.stdout.isTTY ? pretty({ sync: true }) : pino.destination({ fd: 1, sync: true }),
  );
  return logger;
}
