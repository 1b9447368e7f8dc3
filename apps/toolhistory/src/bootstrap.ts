import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { ErrorCode } from '@toolhistory/errors';
import { KafkaMessaging } from '@toolhistory/messaging';
import { connectionUrl, runMigrations } from '@toolhistory/persistence';
import { AppModule } from './app.module';
import { createCallerAuthenticator } from './access/create-caller-authenticator';
import { GrpcHealthService } from './grpc/grpc-health.service';
import { grpcServerOptions, SERVICE_NAMES_NOT_SERVING } from './grpc/grpc-server-options';
import { HealthEndpoint } from './grpc/health-endpoint';
import { ServiceMetrics } from './observability/service-metrics';
import { ReadAdmission } from './admission/read-admission';
import { addReflection } from './grpc/reflection-endpoint';
import { refuseAtTheStream, StreamCounter } from './grpc/stream-admission';
import { GcLoadFollower } from './process/garbage-collection';
import { shutDownGrpcServer } from './grpc/shut-down-grpc-server';
import { PinoNestLogger } from './logging/pino-nest-logger';
import { loadPolicyFile } from './policy/load-policy-file';
import type { OpenSubscriptions } from './subscription/open-subscriptions';
import { OPEN_SUBSCRIPTIONS } from './tokens';
import { o200kTokens } from '@toolhistory/tokenizer';
import { hasRetention, type ToolHistoryPolicy } from '@toolhistory/domain';
import { type Encryption, openEncryption } from './encryption/open-encryption';

export interface RunningService {
  close(): Promise<void>;
}

/** Starts the service for a validated config; used by main.ts and by the tests. */
export async function startService(config: AppConfig, logger: Logger): Promise<RunningService> {
  for (const warning of config.warnings) logger.warn({ component: 'config' }, warning);
  const policy = loadPolicyFile(config.policyFile);
  await checkBroker(config, logger);
  if (config.database.migrateOnStart) {
    const applied = await runMigrations(connectionUrl(config.database), config.database.schema, {
      info: (message) => logger.debug({ component: 'migrations' }, message),
    });
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  }
  // Before anything is recorded or served: a wrong or missing key stops start-up here, naming it.
  const encryption = await openEncryption(config);
  logEncryption(config, policy, encryption, logger);
  // The tokenizer's rank table takes about a second to load: before serving, not in the first turn's budget.
  o200kTokens('');
  const health = new HealthEndpoint(SERVICE_NAMES_NOT_SERVING);
  const metrics = new ServiceMetrics();
  const admission = new ReadAdmission(config.admission, metrics.admissionRecorder());
  metrics.observeAdmission(() => admission.state());
  const authenticator = await createCallerAuthenticator(config.auth, logger.child({ component: 'access' }));
  const module = AppModule.forRoot({ config, logger, policy, health, authenticator, metrics, admission, encryption });
  const nestLogger = new PinoNestLogger(logger.child({ component: 'nest' }));

  // Every role serves HTTP (metrics, probes); the gRPC role adds the gRPC server to the same application.
  const app = await NestFactory.create<NestExpressApplication>(module, {
    logger: nestLogger,
    abortOnError: false,
    httpsOptions: httpsOptions(config.http.tls),
  });
  app.disable('x-powered-by');
  let server: Server | undefined;
  if (config.roles.includes('grpc')) {
    app.connectMicroservice(
      grpcServerOptions(config.grpc, health, metrics, admission, (s) => {
        server = s;
        addReflection(s, authenticator);
      }),
      { inheritAppConfig: true },
    );
  }
  await app.init();
  await app.startAllMicroservices();
  const streams = new StreamCounter();
  if (server !== undefined && refuseAtTheStream(server, admission, (lane) => metrics.admissionStreamRefusals.inc({ lane }), streams) === 0)
    logger.warn(
      'grpc-js keeps its HTTP/2 servers where this version cannot find them: every refusal goes through grpc-js, and the garbage collector is not set by load',
    );
  const gcLoad = new GcLoadFollower(config.gc, () => streams.count, logger, {
    onCollectionStarted: () => metrics.gcFullCollectionsStarted.inc(),
  });
  if (server !== undefined) gcLoad.start();
  await app.listen(config.http.port, config.http.host);
  const { host, port, tls } = config.grpc;
  const http = { host: config.http.host, port: (app.getHttpServer().address() as AddressInfo).port, tls: config.http.tls !== null };
  logger.info(
    {
      roles: config.roles,
      ...(config.roles.includes('grpc')
        ? { grpc: { host, port, tls: tls !== null, clientCertificates: Boolean(tls?.clientCa), auth: config.auth.mode } }
        : {}),
      http,
    },
    'toolhistory started',
  );
  return {
    close: () => {
      gcLoad.stop();
      return closeGracefully(app, server, config, logger);
    },
  };
}

/** What rests how: said once at every start (keys by id only). */
function logEncryption(config: AppConfig, policy: ToolHistoryPolicy, encryption: Encryption | null, logger: Logger): void {
  const log = logger.child({ component: 'encryption' });
  if (encryption === null) {
    if (hasRetention(policy.retention))
      log.warn('the policy sets a retention, but payloads rest in clear (ENCRYPTION_AT_REST=off): retention is not enforced');
    return;
  }
  if (encryption.newCheckFor !== null)
    log.info({ kekId: encryption.newCheckFor }, 'key-encryption key seen for the first time: its check value is kept');
  log.info(
    {
      atRest: config.encryption.atRest,
      activeKey: encryption.keyring.activeKeyId,
      keys: encryption.keyring.keyIds,
      keyStore: config.encryption.keyStore?.kind,
    },
    config.encryption.atRest
      ? 'payloads rest sealed (AES-256-GCM), a data key per conversation and retention period'
      : 'payloads are written in clear; sealed ones are still opened',
  );
}

/** HTTPS with the gRPC server's certificate (and its client CA, requiring client certificates) when TLS is configured. */
function httpsOptions(tls: AppConfig['http']['tls']) {
  if (tls === null) return undefined;
  return {
    cert: tls.certChain,
    key: tls.privateKey.reveal(),
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/**
 * Wrong credentials or an untrusted broker certificate stop start-up here,
 * naming the setting; a broker that is merely down is waited for as before.
 */
async function checkBroker(config: AppConfig, logger: Logger): Promise<void> {
  // One attempt, its connection errors at debug: a broker that is down is the recorder's to wait for.
  const quiet = logger.child({ component: 'kafka' }, { level: logger.isLevelEnabled('debug') ? logger.level : 'silent' });
  const messaging = KafkaMessaging.create(
    { ...config.kafka, clientId: `${config.kafka.clientId}-check` },
    { error: quiet.debug.bind(quiet), warn: quiet.debug.bind(quiet), info: quiet.debug.bind(quiet), debug: quiet.debug.bind(quiet) },
    { retries: 0 },
  );
  try {
    await messaging.verifyAccess();
  } catch (error) {
    if ((error as { code?: string }).code === ErrorCode.InvalidConfig) throw error;
    logger.warn({ component: 'kafka', reason: (error as Error).message }, 'Kafka does not answer yet');
  }
}

/**
 * NestJS force-closes the gRPC server before any shutdown hook runs. The
 * order here instead: health NOT_SERVING (load balancers stop sending),
 * subscription streams ended cleanly, in-flight calls finished within the
 * grace period, and only then the rest (recorder, pools).
 */
async function closeGracefully(app: INestApplication, server: Server | undefined, config: AppConfig, logger: Logger): Promise<void> {
  const health = app.get(GrpcHealthService);
  health.drain();
  const subscriptionsEnded = server ? app.get<OpenSubscriptions>(OPEN_SUBSCRIPTIONS).closeAll() : 0;
  const healthWatchesEnded = health.endWatches();
  if (server) {
    const outcome = await shutDownGrpcServer(server, config.grpc.shutdownGraceMs);
    logger.info({ subscriptionsEnded, healthWatchesEnded, ...outcome }, 'gRPC server stopped');
  }
  await app.close();
}
