import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { PrettyStream } from 'pino-pretty';
import type { LogLevel } from '@toolhistory/config';
import { DETECTOR_KINDS, redactText } from '@toolhistory/domain';

/**
 * Payloads are never logged, but error texts from drivers and parsers can
 * quote data; every line passes the detectors before it is written. IP
 * addresses are left alone: the service logs its own peers' addresses.
 */
const LOG_DETECTORS = new Set(DETECTOR_KINDS.filter((kind) => kind !== 'ip'));

/**
 * A person at a terminal reads lines; a log collector reads JSON. The
 * redaction hook runs on the JSON line in both cases, before pino-pretty
 * renders it.
 */
export function logDestination(stdout: { isTTY?: boolean } = process.stdout): DestinationStream {
  if (!stdout.isTTY) return pino.destination({ fd: 1 });
  // Loaded only for a person at a terminal: a service writing JSON never pays for it at start-up.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as (options: { sync: boolean; ignore: string }) => PrettyStream;
  return pretty({ sync: true, ignore: 'service' });
}

export function createRootLogger(level: LogLevel, destination: DestinationStream = logDestination()): Logger {
  return pino(
    {
      level,
      base: { service: 'toolhistory' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: (line) => redactText(line, LOG_DETECTORS) },
    },
    destination,
  );
}

/** NestJS's start-up chatter (each module initialised, each route mapped): useful when debugging the wiring only. */
const START_UP_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
  'NestMicroservice',
]);

/** Routes NestJS's own logs into the same stream as the service's. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    if (context !== undefined && START_UP_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
