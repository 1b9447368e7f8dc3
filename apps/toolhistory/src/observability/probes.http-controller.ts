import { Controller, Get, Header, HttpStatus, Inject, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { HealthEndpoint } from '../grpc/health-endpoint';
import type { ReadAdmission } from '../admission/read-admission';
import { ADMISSION, HEALTH } from '../tokens';

/**
 * GET /livez and /readyz for orchestrators, answering as grpc.health.v1
 * does for the whole server: live while the process answers at all, ready
 * while PostgreSQL and Kafka answer and it is not shutting down. A busy
 * instance stays ready: refusing what it cannot take is its answer to load.
 * `/readyz?overload=unready` opts in to the readiness signal of overload: 503
 * `OVERLOADED` while admission control refused reads in the last 2 s (for a
 * router that should send elsewhere first; never for a probe that restarts).
 */
@Controller()
export class ProbesHttpController {
  constructor(
    @Inject(HEALTH) private readonly health: HealthEndpoint,
    @Inject(ADMISSION) private readonly admission: ReadAdmission,
  ) {}

  @Get('livez')
  @Header('Cache-Control', 'no-store')
  live(): string {
    return 'live\n';
  }

  @Get('readyz')
  @Header('Cache-Control', 'no-store')
  ready(@Res({ passthrough: true }) response: Response, @Query('overload') overload?: unknown): string {
    const status = this.health.status('');
    if (status !== 'SERVING') {
      response.status(HttpStatus.SERVICE_UNAVAILABLE);
      return `${status}\n`;
    }
    if (overload === 'unready' && this.admission.overloaded()) {
      response.status(HttpStatus.SERVICE_UNAVAILABLE);
      return 'OVERLOADED\n';
    }
    return `${status}\n`;
  }
}
