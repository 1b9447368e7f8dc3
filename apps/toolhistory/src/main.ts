import 'reflect-metadata';
import { loadConfig } from '@toolhistory/config';
import { AppError } from '@toolhistory/errors';
import { startService } from './bootstrap';
import { createRootLogger } from './logging/pino-nest-logger';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof AppError ? error.message : String(error)}\n`);
    process.exit(78); // EX_CONFIG
  }
  const logger = createRootLogger(config.logLevel);
  let app: Awaited<ReturnType<typeof startService>>;
  try {
    app = await startService(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    app
      .close()
      .then(() => process.exit(0))
      .catch((error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main();
