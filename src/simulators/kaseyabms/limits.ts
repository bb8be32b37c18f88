/**
 * BMS's published limit: "The V2 API call limit is 1500 per hour per endpoint" (help.bms.kaseya.com,
 * "V2 BMS Rest APIs"). Counted per tenant (instance) and endpoint (method and path, ids as one template)
 * over a rolling hour. The answer past it is not documented; the simulator answers 429 with Retry-After
 * and the envelope's message, which a client must back off from.
 */
import type { NextFunction, Request, Response } from 'express';

export const BMS_REQUESTS_PER_HOUR_PER_ENDPOINT = 1500;
const HOUR_MS = 3_600_000;

export class EndpointLimiter {
  private readonly windows = new Map<string, number[]>();
  constructor(
    private readonly instanceOf: (req: Request) => string | undefined,
    private readonly limit = BMS_REQUESTS_PER_HOUR_PER_ENDPOINT,
    private readonly now: () => number = Date.now,
  ) {}

  reset(): void {
    this.windows.clear();
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const instance = this.instanceOf(req);
      if (!instance) return next();
      const endpoint = `${req.method} ${req.path.replace(/\/\d+(?=\/|$)/g, '/{id}').toLowerCase()}`;
      const key = `${instance}|${endpoint}`;
      const at = this.now();
      const hits = (this.windows.get(key) ?? []).filter((t) => t > at - HOUR_MS);
      if (hits.length >= this.limit) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil((hits[0] + HOUR_MS - at) / 1000))));
        res.status(429).json({ Success: false, Error: { Code: 429, Message: `API call limit of ${this.limit} per hour for this endpoint exceeded.`, Details: null, StackStrace: null, SubErrors: [] }, Result: null });
        this.windows.set(key, hits);
        return;
      }
      hits.push(at);
      this.windows.set(key, hits);
      next();
    };
  }
}
