import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { prometheusExporter } from './telemetry.js';

@Controller('metrics')
export class MetricsController {
  /** Prometheus text format: every leader_election_* series of this replica. */
  @Get()
  scrape(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    prometheusExporter.getMetricsRequestHandler(req, res);
  }
}
