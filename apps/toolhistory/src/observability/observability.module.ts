import { Module } from '@nestjs/common';
import { GrpcHealthService } from '../grpc/grpc-health.service';
import { MetricsHttpController } from './metrics.http-controller';
import { ProbesHttpController } from './probes.http-controller';

/**
 * What operators and orchestrators read, in every role: /metrics, the
 * probes, and the health checks behind both them and grpc.health.v1.
 */
@Module({
  controllers: [MetricsHttpController, ProbesHttpController],
  providers: [GrpcHealthService],
  exports: [GrpcHealthService],
})
export class ObservabilityModule {}
