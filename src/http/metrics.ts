/** Prometheus metrics (prom-client): process defaults plus request counts and latencies per route. */
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests', labelNames: ['method', 'route', 'status'], registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds', help: 'HTTP request latency', labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const start = process.hrtime.bigint();
      res.on('finish', () => {
        const route = (req.route?.path as string | undefined) ?? (req.path.startsWith('/sandbox-vendors/') ? '/sandbox-vendors' : 'unmatched');
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        this.requests.inc({ method: req.method, route, status: String(res.statusCode) });
        this.latency.observe({ method: req.method, route }, seconds);
      });
      next();
    };
  }
}
