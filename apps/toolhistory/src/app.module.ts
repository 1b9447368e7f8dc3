import { DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { CallerAuthenticator, ToolHistoryPolicy } from '@toolhistory/domain';
import { KafkaMessaging } from '@toolhistory/messaging';
import { DatabaseModule } from './database/database.module';
import type { HealthEndpoint } from './grpc/health-endpoint';
import { CallerGuard } from './access/caller.guard';
import { ConsoleModule } from './console/console.module';
import { GrpcModule } from './grpc/grpc.module';
import { ObservabilityModule } from './observability/observability.module';
import type { ServiceMetrics } from './observability/service-metrics';
import { RecorderModule } from './recorder/recorder.module';
import type { ReadAdmission } from './admission/read-admission';
import {
  ADMISSION,
  APP_CONFIG,
  CALLER_AUTHENTICATOR,
  HEALTH,
  MESSAGING,
  METRICS,
  REDACTION_POLICY,
  REPLAY_POLICY,
  ROOT_LOGGER,
} from './tokens';

export interface AppModuleOptions {
  config: AppConfig;
  logger: Logger;
  policy: ToolHistoryPolicy;
  health: HealthEndpoint;
  authenticator: CallerAuthenticator;
  metrics: ServiceMetrics;
  admission: ReadAdmission;
}

@Global()
@Module({})
class CoreModule implements OnApplicationShutdown {
  constructor(@Inject(MESSAGING) private readonly messaging: KafkaMessaging) {}

  // After every module that asks the broker has stopped (modules shut down in reverse order).
  async onApplicationShutdown(): Promise<void> {
    await this.messaging.close();
  }

  static forRoot({ config, logger, policy, health, authenticator, metrics, admission }: AppModuleOptions): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        // Every RPC and HTTP route, of every role, passes the caller check first.
        { provide: APP_GUARD, useClass: CallerGuard },
        { provide: METRICS, useValue: metrics },
        { provide: APP_CONFIG, useValue: config },
        { provide: ROOT_LOGGER, useValue: logger },
        { provide: REPLAY_POLICY, useValue: policy.replay },
        { provide: REDACTION_POLICY, useValue: policy.redaction },
        { provide: HEALTH, useValue: health },
        { provide: ADMISSION, useValue: admission },
        { provide: CALLER_AUTHENTICATOR, useValue: authenticator },
        { provide: MESSAGING, useFactory: () => KafkaMessaging.create(config.kafka, logger.child({ component: 'kafka' })) },
      ],
      exports: [APP_CONFIG, ROOT_LOGGER, REPLAY_POLICY, REDACTION_POLICY, HEALTH, ADMISSION, CALLER_AUTHENTICATOR, MESSAGING, METRICS],
    };
  }
}

/** Composes the roles this instance runs (SERVICE_ROLES). */
@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    const { roles } = options.config;
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(options),
        DatabaseModule,
        ObservabilityModule,
        ...(roles.includes('recorder') ? [RecorderModule] : []),
        ...(roles.includes('grpc') ? [GrpcModule, ConsoleModule] : []),
      ],
    };
  }
}
