/**
 * openid-client (v6, ESM only) for the rest of this CommonJS service: loaded once with a dynamic import,
 * which the build keeps as it is, and the one place that discovers an issuer (docs/architecture.md,
 * Single sign-on). Every request it makes goes through the guarded fetch (oidc-fetch.ts); plain http is
 * admitted only for a loopback issuer under WEBHOOK_ALLOW_LOOPBACK (tests and the sandbox).
 */
import { guardedFetch } from './oidc-fetch';

export type OpenIdClient = typeof import('openid-client');
export type OidcConfiguration = import('openid-client').Configuration;

let loaded: Promise<OpenIdClient> | undefined;

export function openIdClient(): Promise<OpenIdClient> {
  loaded ??= import('openid-client');
  return loaded;
}

/** How long one call to the provider may take. */
export const PROVIDER_TIMEOUT_MS = 10_000;

export interface IssuerClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * The provider's metadata from its discovery document (the issuer it names must be exactly `issuer`,
 * openid-client checks), with the client authenticating by HTTP Basic (client_secret_basic, the
 * default of OpenID Connect and offered by Entra ID, Google and Okta alike).
 */
export async function discover(c: IssuerClient, allowLoopback: boolean): Promise<OidcConfiguration> {
  const client = await openIdClient();
  const insecure = allowLoopback && new URL(c.issuer).protocol === 'http:';
  return client.discovery(new URL(c.issuer), c.clientId, undefined, client.ClientSecretBasic(c.clientSecret), {
    [client.customFetch]: guardedFetch({ allowLoopback, timeoutMs: PROVIDER_TIMEOUT_MS }) as never,
    execute: insecure ? [client.allowInsecureRequests] : [],
    timeout: PROVIDER_TIMEOUT_MS / 1000,
  });
}
