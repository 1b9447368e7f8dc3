import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { runMigrations } from '@toolhistory/persistence';
import { AppModule } from './app.module';
import { PinoNestLogger } from './logging/pino-nest-logger';

/** Starts the service for a validated config; used by main.ts and by the tests. */
export async function startService(config: AppConfig, logger: Logger): Promise<INestApplicationContext> {
  if (config.database.migrateOnStart) {
    const applied = await runMigrations(config.database.url, config.database.schema, {
      info: (message) => logger.debug({ component: 'migrations' }, message),
    });
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  }
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), {
    logger: new PinoNestLogger(logger.child({ component: 'nest' })),
    abortOnError: false,
  });
  await app.init();
  logger.info({ roles: config.roles }, 'toolhistory started');
  return app;
}
