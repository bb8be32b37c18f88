/**
 * Halo's OAuth2 client-credentials flow: POST /auth/token (form) gives a bearer token; the client
 * id selects the instance (the dataset) the token reads and writes.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** Public sandbox credentials (README): client id -> secret and the instance it selects. */
export const SANDBOX_CLIENTS: Record<string, { secret: string; instance: string }> = {
  sandbox: { secret: 'sandbox-secret', instance: 'sandbox-beta' },
};

/** Halo's tokens live an hour. */
export const TOKEN_TTL_SECONDS = 3600;

interface IssuedToken {
  instance: string;
  expiresAt: number;
}

export class HaloTokens {
  private readonly tokens = new Map<string, IssuedToken>();
  /** Instances whose application the MSP revoked (FaultInjector.credentialsRevoked): refused like an unknown client. */
  revoked: (instance: string) => boolean = () => false;

  constructor(
    private readonly clients = SANDBOX_CLIENTS,
    private readonly ttlSeconds = TOKEN_TTL_SECONDS,
    /** Halo-hosted instances need `?tenant=<name>` on the token request (n8n's HaloPSA credential docs;
     *  CIPP's Get-HaloToken sends `<auth url>/token?tenant=<name>`). Without it the client is not found. */
    private readonly tenant?: string,
  ) {}

  /** The /auth/token handler (body already parsed as a form). */
  readonly tokenHandler = (req: Request, res: Response): void => {
    const form = (req.body ?? {}) as Record<string, string | undefined>;
    if (form.grant_type !== 'client_credentials') {
      res.status(400).json({ error: 'unsupported_grant_type' });
      return;
    }
    const client = form.client_id ? this.clients[form.client_id] : undefined;
    const tenant = typeof req.query.tenant === 'string' ? req.query.tenant : undefined;
    // Unconfirmed how Halo answers a missing tenant; an unknown client is the closest documented answer.
    if (!client || client.secret !== form.client_secret || (this.tenant && tenant !== this.tenant) || this.revoked(client.instance)) {
      res.status(401).json({ error: 'invalid_client' });
      return;
    }
    const token = randomBytes(32).toString('base64url');
    this.tokens.set(token, { instance: client.instance, expiresAt: Date.now() + this.ttlSeconds * 1000 });
    if (this.tokens.size > 10_000) this.dropExpired();
    res.set('Cache-Control', 'no-store');
    res.json({ access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds, scope: form.scope || 'all' });
  };

  /** Middleware for /api: a live bearer token, else Halo's 401. Puts the instance in res.locals. */
  readonly requireBearer = (req: Request, res: Response, next: NextFunction): void => {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const issued = m ? this.tokens.get(m[1]) : undefined;
    if (!issued || issued.expiresAt <= Date.now() || this.revoked(issued.instance)) {
      res.set('WWW-Authenticate', 'Bearer');
      res.status(401).json({ message: 'Authorization has been denied for this request.' });
      return;
    }
    res.locals.instance = issued.instance;
    next();
  };

  /** Invalidates every token (as a revoked application would). */
  revokeAll(): void {
    this.tokens.clear();
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [t, v] of this.tokens) if (v.expiresAt <= now) this.tokens.delete(t);
  }
}
