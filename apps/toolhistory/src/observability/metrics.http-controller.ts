import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { METRICS } from '../tokens';
import type { ServiceMetrics } from './service-metrics';

/** GET /metrics: the Prometheus exposition (scope metrics:read when authentication is on). */
@Controller()
export class MetricsHttpController {
  constructor(@Inject(METRICS) private readonly metrics: ServiceMetrics) {}

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) response: Response): Promise<string> {
    const { contentType, body } = await this.metrics.scrape();
    response.setHeader('Content-Type', contentType);
    return body;
  }
}
