/**
 * BMS API 2.0 sign-in: POST /v2/security/authenticate (a form: GrantType `password`, UserName, Password,
 * Tenant, the company name shown under My Settings) answers `TokenOutputDto` (AccessToken, RefreshToken and
 * their expiry times) in the envelope; POST /v2/security/refreshtoken (AccessToken, RefreshToken) renews it.
 * Every other operation takes `Authorization: Bearer <AccessToken>` (the document's one security scheme).
 * Help page "V2 BMS Rest APIs" (help.bms.kaseya.com): username, password and company name.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { failure, success } from './envelope';

/** A BMS user of the sandbox: the tenant it signs in to selects the instance; `limited` lacks ticket rights. */
export interface BmsUser { password: string; tenant: string; instance: string; limited?: boolean }

/** Public sandbox users (README). */
export const SANDBOX_USERS: Record<string, BmsUser> = {
  sandbox: { password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA', instance: 'sandbox-gamma' },
  'sandbox-limited': { password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA', instance: 'sandbox-gamma', limited: true },
};

/** Token lifetimes the simulator gives (BMS states its own in AccessTokenExpireOn / RefreshTokenExpireOn). */
const ACCESS_TTL_MS = 60 * 60 * 1000;
const REFRESH_TTL_MS = 24 * 60 * 60 * 1000;

export interface IssuedToken { user: string; instance: string; limited: boolean; expiresAt: number; refresh: string; refreshExpiresAt: number }

export class BmsTokens {
  private readonly tokens = new Map<string, IssuedToken>();
  revoked: (instance: string) => boolean = () => false;

  constructor(private readonly users: Record<string, BmsUser> = SANDBOX_USERS, private readonly now: () => number = Date.now) {}

  private issue(res: Response, user: string, u: Pick<BmsUser, 'instance' | 'limited'>): void {
    const access = randomBytes(32).toString('base64url');
    const refresh = randomBytes(32).toString('base64url');
    const at = this.now();
    this.tokens.set(access, { user, instance: u.instance, limited: !!u.limited, expiresAt: at + ACCESS_TTL_MS, refresh, refreshExpiresAt: at + REFRESH_TTL_MS });
    if (this.tokens.size > 10_000) for (const [t, v] of this.tokens) if (v.refreshExpiresAt <= at) this.tokens.delete(t);
    success(res, {
      AccessToken: access, RefreshToken: refresh,
      AccessTokenExpireOn: new Date(at + ACCESS_TTL_MS).toISOString(), RefreshTokenExpireOn: new Date(at + REFRESH_TTL_MS).toISOString(),
    });
  }

  /** POST /v2/security/authenticate; wrong credentials are an envelope error at 200, as every BMS operation answers. */
  readonly authenticate = (req: Request, res: Response): void => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    if (typeof form.GrantType !== 'string' || form.GrantType === '') return failure(res, 400, 'The GrantType field is required.');
    if (form.GrantType !== 'password') return failure(res, 400, `Grant type ${form.GrantType} is not supported.`);
    const name = typeof form.UserName === 'string' ? form.UserName : '';
    const u = this.users[name];
    if (!u || u.password !== form.Password || String(form.Tenant ?? '').toUpperCase() !== u.tenant || this.revoked(u.instance)) {
      return failure(res, 401, 'Invalid username, password or company name.');
    }
    this.issue(res, name, u);
  };

  /** POST /v2/security/refreshtoken: the pair issued together, the refresh token still valid. */
  readonly refresh = (req: Request, res: Response): void => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const old = typeof form.AccessToken === 'string' ? this.tokens.get(form.AccessToken) : undefined;
    if (!old || old.refresh !== form.RefreshToken || old.refreshExpiresAt <= this.now() || this.revoked(old.instance)) {
      return failure(res, 401, 'Invalid refresh token.');
    }
    this.tokens.delete(String(form.AccessToken));
    this.issue(res, old.user, old);
  };

  /** Bearer middleware: ASP.NET's JWT check answers 401 with no body before any operation runs. */
  readonly requireBearer = (req: Request, res: Response, next: NextFunction): void => {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const issued = m ? this.tokens.get(m[1]) : undefined;
    if (!issued || issued.expiresAt <= this.now() || this.revoked(issued.instance)) {
      res.set('WWW-Authenticate', 'Bearer');
      res.status(401).end();
      return;
    }
    res.locals.instance = issued.instance;
    res.locals.bmsUser = issued.user;
    res.locals.limited = issued.limited;
    next();
  };

  /** The instance an Authorization header's token selects (the rate limit's and the fault log's key). */
  instanceOf(authorization: string | undefined): string | undefined {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    return m ? this.tokens.get(m[1])?.instance : undefined;
  }

  revokeAll(): void {
    this.tokens.clear();
  }
}
