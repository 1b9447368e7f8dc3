import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { createKafka } from '@toolhistory/messaging';
import { DatabaseModule } from './database/database.module';
import { RecorderModule } from './recorder/recorder.module';
import { APP_CONFIG, KAFKA, ROOT_LOGGER } from './tokens';

@Global()
@Module({})
class CoreModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: ROOT_LOGGER, useValue: logger },
        { provide: KAFKA, useFactory: () => createKafka(config.kafka, logger.child({ component: 'kafka' })) },
      ],
      exports: [APP_CONFIG, ROOT_LOGGER, KAFKA],
    };
  }
}

/** Composes the roles this instance runs (SERVICE_ROLES). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    const roleModules = config.roles.includes('recorder') ? [RecorderModule] : [];
    return {
      module: AppModule,
      imports: [CoreModule.forRoot(config, logger), DatabaseModule, ...roleModules],
    };
  }
}
