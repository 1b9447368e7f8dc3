import { Controller, Get, Header, HttpStatus, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { HealthEndpoint } from '../grpc/health-endpoint';
import { HEALTH } from '../tokens';

/**
 * GET /livez and /readyz for orchestrators, answering as grpc.health.v1
 * does for the whole server: live while the process answers at all, ready
 * while PostgreSQL and Kafka answer and it is not shutting down.
 */
@Controller()
export class ProbesHttpController {
  constructor(@Inject(HEALTH) private readonly health: HealthEndpoint) {}

  @Get('livez')
  @Header('Cache-Control', 'no-store')
  live(): string {
    return 'live\n';
  }

  @Get('readyz')
  @Header('Cache-Control', 'no-store')
  ready(@Res({ passthrough: true }) response: Response): string {
    const status = this.health.status('');
    if (status !== 'SERVING') response.status(HttpStatus.SERVICE_UNAVAILABLE);
    return `${status}\n`;
  }
}
