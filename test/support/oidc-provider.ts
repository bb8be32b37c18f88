/**
 * A real OpenID provider on loopback for the single sign-on tests (the `oidc-provider` package, v9, ESM
 * only, so loaded with a dynamic import): one confidential client registered for the service's callback
 * (client_secret_basic, authorization code with PKCE), its development sign-in pages (any password; the
 * login names the account) and the accounts the test gives, each with its email claims.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/**
 * What a test may tamper with, as an attacker between the browser and the provider could: the query of
 * an authorization request as the provider receives it (a changed `nonce` ends up in the ID token), and
 * the redirect back to the service (a changed `state`). A browser's request interception cannot reach
 * the latter: it is a redirect, which Playwright's routes do not see.
 */
export interface ProviderTamper {
  authorizeQuery?: (query: URLSearchParams) => void;
  callback?: (url: URL) => void;
  /** The lifetime of the authorization codes issued from now on (default 60 s): shortened, a held callback meets an expired code. */
  codeTtlSeconds?: number;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Its fields are set and cleared by a test; they apply to the requests that follow. */
  tamper: ProviderTamper;
  close(): Promise<void>;
}

export async function startOidcProvider(opts: { redirectUri: string; accounts: Record<string, TestAccount> }): Promise<TestProvider> {
  // Its loading and start warn about the Node version and the development sign-in pages, which are
  // exactly what a test wants: those warnings are kept out of the test's output.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => { if (!String(args[0]).startsWith('oidc-provider WARNING')) warn(...args); };
  // The package ships no types; it is imported by a name TypeScript does not resolve.
  const moduleName = 'oidc-provider';
  let Provider: new (issuer: string, config: Record<string, unknown>) => { callback(): http.RequestListener };
  try {
    Provider = ((await import(moduleName)) as { default: typeof Provider }).default;
  } finally {
    console.warn = warn;
  }
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `service-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  console.warn = (...args: unknown[]) => { if (!String(args[0]).startsWith('oidc-provider WARNING')) warn(...args); };
  const tamper: ProviderTamper = {};
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId, client_secret: clientSecret, redirect_uris: [opts.redirectUri],
      response_types: ['code'], grant_types: ['authorization_code'], token_endpoint_auth_method: 'client_secret_basic',
    }],
    async findAccount(_ctx: unknown, id: string) {
      const account = opts.accounts[id];
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: true } },
    // Lifetimes in seconds, set so the provider does not warn about its defaults.
    ttl: { AuthorizationCode: () => tamper.codeTtlSeconds ?? 60, Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
  });
  console.warn = warn;
  const handler = provider.callback();
  const callbackPrefix = opts.redirectUri;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (tamper.authorizeQuery && url.pathname === '/auth' && url.search) {
      tamper.authorizeQuery(url.searchParams);
      req.url = `${url.pathname}${url.search}`;
    }
    if (tamper.callback) {
      const rewrite = tamper.callback;
      const setHeader = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: number | string | readonly string[]) => {
        if (name.toLowerCase() === 'location' && typeof value === 'string' && value.startsWith(callbackPrefix)) {
          const target = new URL(value);
          rewrite(target);
          return setHeader(name, target.href);
        }
        return setHeader(name, value);
      }) as typeof res.setHeader;
    }
    handler(req, res);
  });
  return {
    issuer, clientId, clientSecret, tamper,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
