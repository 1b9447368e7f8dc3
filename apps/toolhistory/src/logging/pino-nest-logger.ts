import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import type { LogLevel } from '@toolhistory/config';
import { DETECTOR_KINDS, redactText } from '@toolhistory/domain';

/**
 * Payloads are never logged, but error texts from drivers and parsers can
 * quote data; every line passes the detectors before it is written. IP
 * addresses are left alone: the service logs its own peers' addresses.
 */
const LOG_DETECTORS = new Set(DETECTOR_KINDS.filter((kind) => kind !== 'ip'));

export function createRootLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'toolhistory' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    hooks: { streamWrite: (line) => redactText(line, LOG_DETECTORS) },
  });
}

/** Routes NestJS's own logs into the same JSON stream as the service's. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
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
