import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { type AppConfig, loadConfig } from '@toolhistory/config';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { EXIT } from './cli/exit-codes';
import { findProjectFile } from './find-project-file';
import { applyStartupGcFlags } from './process/garbage-collection';
import type { Logger } from 'pino';
import type { Tracing } from './observability/tracing';

/** A batch in hand finishes or rolls back well within this; past it, something is stuck. */
const SHUTDOWN_TIMEOUT_MS = 30_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof AppError ? error.message : String(error)}\n`);
    process.exit(EXIT.CONFIG);
  }
  // Before the heap grows: the collector's settings decide how long the pauses in a flood are (ADR 035, 036).
  const gcFlags = applyStartupGcFlags(config.gc);
  // Tracing first: its instrumentations hook the loading of grpc-js, pg and pino, which the rest loads.
  const tracing = await startTracingIfConfigured(config);
  const { startService } = await import('./bootstrap');
  const { createRootLogger } = await import('./logging/pino-nest-logger');
  const logger = createRootLogger(config.logLevel);
  routeProcessWarnings(logger);
  logger.info({ component: 'gc', v8Flags: gcFlags, callsPerFullCollection: config.gc.callsPerFullCollection }, 'garbage collector set');
  if (tracing) logger.info({ component: 'tracing', endpoint: config.tracing.endpoint }, 'exporting traces over OTLP/HTTP');
  let app: Awaited<ReturnType<typeof startService>>;
  try {
    app = await startService(config, logger);
  } catch (error) {
    // A setting to fix is said in words, without a stack; anything else is our fault and keeps its stack.
    if (error instanceof AppError && error.code === ErrorCode.InvalidConfig) {
      logger.fatal({ component: 'config' }, `start-up failed: ${error.message}`);
      process.exit(EXIT.CONFIG);
    }
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }

  // Logging must never stop a shutdown (stdout may be a pipe whose reader is gone).
  const safely = (write: () => void) => {
    try {
      write();
    } catch {
      /* nothing left to tell */
    }
  };
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    safely(() => logger.info({ signal }, 'shutting down'));
    setTimeout(() => {
      safely(() => logger.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out'));
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    app
      .close()
      .then(() => tracing?.shutdown())
      .then(() => process.exit(0))
      .catch((error) => {
        safely(() => logger.error({ err: error }, 'shutdown failed'));
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * Node.js's warnings go into the log like everything else, at warn: the one
 * kept at debug before (kafkajs's timer with a negative delay) was a timer
 * loop, patched since (ADR 037).
 */
function routeProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => logger.warn({ component: 'node', warning: warning.name }, warning.message));
}

async function startTracingIfConfigured(config: AppConfig): Promise<Tracing | null> {
  const { endpoint, serviceName } = config.tracing;
  if (endpoint === null) return null;
  const { otlpExporter, startTracing } = await import('./observability/tracing');
  const { version } = JSON.parse(readFileSync(findProjectFile('package.json'), 'utf8')) as { version: string };
  return startTracing({ serviceName, serviceVersion: version, exporter: otlpExporter(endpoint) });
}

void main();
