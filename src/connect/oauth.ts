/**
 * OAuth 2.0 authorization code with PKCE (RFC 6749 section 4.1, RFC 7636 S256) for connectors that
 * declare it (a vendor that needs a user's context): the authorize URL, and the code exchange at the
 * vendor's token endpoint. The vendor's paths and scopes come from the connector's declaration.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthDeclaration } from '../connectors/capabilities';
import { VendorHttpError, type VendorHttpClient } from '../connectors/vendor-http';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(baseUrl: string, oauth: OAuthDeclaration, clientId: string, redirectUri: string, challenge: string, state: string): string {
  const url = new URL(`${baseUrl}${oauth.authorizePath}`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: oauth.scopes.join(' '),
    state, code_challenge: challenge, code_challenge_method: 'S256',
  }).toString();
  return url.href;
}

/** The code for tokens; the refresh token is what the connection keeps (the access token is asked for again when used). */
export async function exchangeCode(
  http: VendorHttpClient, baseUrl: string, oauth: OAuthDeclaration, credentials: Record<string, string>, code: string, verifier: string, redirectUri: string,
): Promise<{ ok: true; refreshToken: string } | { ok: false; error: string }> {
  try {
    const res = await http.request<{ refresh_token?: string }>({
      method: 'POST', url: `${baseUrl}${oauth.tokenPath}`, retry: false,
      form: {
        grant_type: 'authorization_code', client_id: credentials[oauth.clientIdCredential], client_secret: credentials[oauth.clientSecretCredential],
        code, redirect_uri: redirectUri, code_verifier: verifier,
      },
    });
    const refreshToken = res.body?.refresh_token;
    if (typeof refreshToken !== 'string' || !refreshToken) return { ok: false, error: 'The vendor issued no refresh token: give the API application the offline access (refresh token) permission and sign in again.' };
    return { ok: true, refreshToken };
  } catch (err) {
    if (err instanceof VendorHttpError) {
      const b = err.body as { error?: string; error_description?: string } | null;
      return { ok: false, error: `The vendor refused the sign-in: ${b?.error_description ?? b?.error ?? `status ${err.status}`}.` };
    }
    throw err;
  }
}
