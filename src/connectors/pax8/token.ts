/**
 * Pax8 access tokens: client credentials exchanged at `<base>/token` for a bearer token that lives
 * 24 hours. Tokens are cached until shortly before they expire, per API host and client, and
 * concurrent callers share one token request.
 */
import { createHash } from 'node:crypto';
import type { SyncContext } from '../types';

export const PAX8_AUDIENCE = 'https://api.pax8.com';

interface CachedToken {
  accessToken: string;
  /** Epoch ms after which we stop using it (a margin before the real expiry). */
  refreshAt: number;
}

const cache = new Map<string, CachedToken>();
const pending = new Map<string, Promise<CachedToken>>();

interface Pax8Credentials {
  clientId: string;
  clientSecret: string;
}

function credentialsOf(ctx: Pick<SyncContext, 'credentials'>): Pax8Credentials {
  const { clientId, clientSecret } = ctx.credentials;
  if (!clientId || !clientSecret) throw new Error('pax8 connection credentials need clientId and clientSecret');
  return { clientId, clientSecret };
}

/**
 * Host + client id, plus a hash of the secret: two connections that share a client id but not its
 * secret must not share a token (the second one's credentials were never checked).
 */
function cacheKey(baseUrl: string, creds: Pax8Credentials): string {
  const secretHash = createHash('sha256').update(creds.clientSecret).digest('hex').slice(0, 16);
  return `${baseUrl}\n${creds.clientId}\n${secretHash}`;
}

/** Stop using a token a minute early (or a tenth of its life, if shorter) so it never expires mid-call. */
function refreshTime(expiresInSeconds: number, now = Date.now()): number {
  const lifeMs = Math.max(0, expiresInSeconds) * 1000;
  return now + lifeMs - Math.min(60_000, lifeMs / 10);
}

async function requestToken(ctx: Pick<SyncContext, 'baseUrl' | 'http'>, creds: Pax8Credentials): Promise<CachedToken> {
  const res = await ctx.http.request<{ access_token?: unknown; expires_in?: unknown }>({
    method: 'POST',
    url: `${ctx.baseUrl}/token`,
    json: {
      client_id: creds.clientId,
      client_secret: creds.clientSecret,
      audience: PAX8_AUDIENCE,
      grant_type: 'client_credentials',
    },
    // Minting a token changes nothing on the vendor side, so a throttled attempt may be repeated.
    retry: true,
  });
  const { access_token: accessToken, expires_in: expiresIn } = res.body ?? {};
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('pax8 token response has no access_token');
  return { accessToken, refreshAt: refreshTime(typeof expiresIn === 'number' ? expiresIn : 0) };
}

/** A valid bearer token for the connection; `fresh` skips the cache (after a 401). */
export async function pax8AccessToken(
  ctx: Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>,
  fresh = false,
): Promise<string> {
  const creds = credentialsOf(ctx);
  const key = cacheKey(ctx.baseUrl, creds);
  const cached = cache.get(key);
  if (!fresh && cached && cached.refreshAt > Date.now()) return cached.accessToken;
  if (fresh) cache.delete(key);

  let inFlight = pending.get(key);
  if (!inFlight) {
    inFlight = requestToken(ctx, creds).finally(() => pending.delete(key));
    pending.set(key, inFlight);
  }
  const token = await inFlight;
  cache.set(key, token);
  return token.accessToken;
}

/** Forgets every cached token (tests, credential rotation). */
export function clearPax8TokenCache(): void {
  cache.clear();
}
