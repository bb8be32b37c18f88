/**
 * The one request authenticator (docs/architecture.md, Tenancy, keys and grants), used by every surface:
 * REST and MCP (`X-API-Key`), GraphQL (`X-API-Key`, or the admin token as `Authorization: Bearer`), and
 * any later one. It looks the key up, counts failed authentications per client address and counts every
 * authenticated request against its key's limit (rate-limit.ts):
 * - a failure past the per-address limit answers 429 `rate_limited` with Retry-After instead of 401, so a
 *   guesser learns nothing more and is told to stop; a VALID key from the same address is still served
 *   (the limit counts failures, never successes), so one guesser behind a NAT or proxy locks nobody out;
 * - an authenticated key past its per-minute limit answers 429 with Retry-After; every answer to a key
 *   carries RateLimit-Limit, -Remaining and -Reset. The admin token (internal tooling) has no per-key limit.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors/service-error';
import type { AccessService } from './access.service';
import type { Caller } from './caller';
import type { RateLimits } from './rate-limit';

/** Which credentials a surface takes. */
export interface AcceptedCredentials {
  /** `Authorization: Bearer <ADMIN_TOKEN>` (GraphQL only). */
  adminToken?: boolean;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export class RequestAuthenticator {
  constructor(
    private readonly access: AccessService,
    private readonly limits: RateLimits,
    private readonly adminToken: string,
  ) {}

  /**
   * The caller of a request, or a ServiceError: `unauthenticated` (401), `rate_limited` (429 with
   * `retryAfterSeconds`). Sets the RateLimit headers on `res` for a key caller.
   */
  async authenticate(req: Request, res: Response, accepts: AcceptedCredentials = {}): Promise<Caller> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const authorization = req.header('authorization');
    const apiKey = req.header('x-api-key');
    let caller: Caller;
    if (accepts.adminToken && authorization !== undefined && apiKey === undefined) {
      if (!sameSecret(authorization, `Bearer ${this.adminToken}`)) {
        await this.failed(address, 'The admin token is wrong: send Authorization: Bearer <ADMIN_TOKEN>, or an API key in X-API-Key.');
      }
      return { kind: 'admin' };
    }
    try {
      caller = await this.access.authenticate(apiKey ?? undefined);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'unauthenticated') await this.failed(address, err.message);
      throw err;
    }
    if (caller.kind !== 'admin') {
      const admitted = await this.limits.admitKey(caller.apiKeyId, res);
      if (!admitted.ok) {
        throw new ServiceError('rate_limited', `This key went past its limit of ${this.limits.perKeyPerMinute} requests a minute.`, { retryAfterSeconds: admitted.retryAfterSeconds });
      }
    }
    return caller;
  }

  /** Express middleware: the caller in `res.locals.caller`, or the error to the app's error handler. */
  middleware(accepts: AcceptedCredentials = {}): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      res.locals.caller = await this.authenticate(req, res, accepts);
      next();
    };
  }

  /** Counts a failed authentication of the address; 429 past its limit, 401 below it. */
  private async failed(address: string, message: string): Promise<never> {
    const blocked = await this.limits.authFailed(address);
    if (blocked !== null) {
      throw new ServiceError('rate_limited', 'Too many failed authentications from this address; wait before trying again.', { retryAfterSeconds: blocked });
    }
    throw new ServiceError('unauthenticated', message);
  }
}
