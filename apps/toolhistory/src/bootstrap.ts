import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { runMigrations } from '@toolhistory/persistence';
import { AppModule } from './app.module';
import { grpcServerOptions, SERVICE_NAMES_NOT_SERVING } from './grpc/grpc-server-options';
import { PinoNestLogger } from './logging/pino-nest-logger';
import { loadPolicyFile } from './policy/load-policy-file';

export interface RunningService {
  close(): Promise<void>;
}

/** Starts the service for a validated config; used by main.ts and by the tests. */
export async function startService(config: AppConfig, logger: Logger): Promise<RunningService> {
  const policy = loadPolicyFile(config.policyFile);
  if (config.database.migrateOnStart) {
    const applied = await runMigrations(config.database.url, config.database.schema, {
      info: (message) => logger.debug({ component: 'migrations' }, message),
    });
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  }
  const health = new HealthImplementation(SERVICE_NAMES_NOT_SERVING);
  const module = AppModule.forRoot({ config, logger, policy, health });
  const nestLogger = new PinoNestLogger(logger.child({ component: 'nest' }));

  if (config.roles.includes('grpc')) {
    const app = await NestFactory.createMicroservice(module, {
      ...grpcServerOptions(config.grpc.port, health),
      logger: nestLogger,
      abortOnError: false,
    });
    await app.listen();
    logger.info({ roles: config.roles, grpcPort: config.grpc.port }, 'toolhistory started');
    return app;
  }
  const app = await NestFactory.createApplicationContext(module, { logger: nestLogger, abortOnError: false });
  await app.init();
  logger.info({ roles: config.roles }, 'toolhistory started');
  return app;
}
