/**
 * The OpenID Connect sign-in itself (docs/architecture.md, Single sign-on), authorization code with
 * PKCE, through openid-client:
 * - `start`: discovers the issuer, makes the PKCE verifier, `state` and `nonce`, keeps them sealed on a
 *   sign-in attempt bound to this browser (a random token in a cookie, only its SHA-256 stored, ten
 *   minutes, spent once) and answers the provider's authorize URL;
 * - `finish`: spends the browser's attempt (a second use, another browser or a late one finds nothing),
 *   lets openid-client check the callback (`state`, `iss`), redeem the code with the verifier, and check
 *   the ID token (signature, issuer, audience, expiry, `nonce`); then the email (the ID token's, else
 *   UserInfo's for the same subject) must be there, verified where the provider says, and in one of the
 *   configuration's domains.
 * What a sign-in then does with the person is sso-sign-in.ts's.
 */
import type { SecretBox } from '../../security/secret-box';
import { hashOf, newToken, tokenShaped } from '../secret-tokens';
import { personName } from '../people.types';
import { discover, openIdClient } from './openid';
import { emailCovered } from './sso-domains';
import { providerProblem, type SsoClientConfig, type SsoSettings } from './sso-settings';

export const ATTEMPT_TTL_MS = 10 * 60_000;
export const CALLBACK_PATH = '/sign-in/oidc/callback';

interface AttemptChecks {
  state: string;
  nonce: string;
  verifier: string;
}

export type FinishRefusal =
  | 'no_attempt' /* none for this browser: used, expired, or started elsewhere */
  | 'config_gone'
  | 'provider_declined' /* the provider answered with an error (the person cancelled, or is not assigned to the application) */
  | 'provider_refused' /* state, nonce, code, token or signature check failed */
  | 'email_missing'
  | 'email_unverified'
  | 'foreign_domain';

export type FinishResult =
  | { ok: true; config: SsoClientConfig; email: string; name: string }
  | { ok: false; refusal: FinishRefusal; detail?: string; config?: SsoClientConfig };

export class SsoFlow {
  constructor(
    private readonly settings: SsoSettings,
    private readonly box: SecretBox,
    private readonly config: { publicUrl: string; webhookAllowLoopback: boolean },
  ) {}

  callbackUrl(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  /** The authorize URL to send the browser to, and the browser's token for its attempt cookie. */
  async start(config: SsoClientConfig, loginHint: string): Promise<{ authorizeUrl: string; browserToken: string }> {
    const client = await openIdClient();
    const oidc = await discover(config, this.config.webhookAllowLoopback);
    const checks: AttemptChecks = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    const browserToken = newToken();
    await this.settings.store.addAttempt(hashOf(browserToken), config.id, this.box.sealJson(checks), new Date(Date.now() + ATTEMPT_TTL_MS));
    const url = client.buildAuthorizationUrl(oidc, {
      redirect_uri: this.callbackUrl(), response_type: 'code', scope: 'openid email profile',
      state: checks.state, nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.verifier), code_challenge_method: 'S256',
      ...(loginHint ? { login_hint: loginHint } : {}),
    });
    return { authorizeUrl: url.href, browserToken };
  }

  /** `search`: the callback's query string as the browser sent it. */
  async finish(browserToken: string, search: string): Promise<FinishResult> {
    const attempt = tokenShaped(browserToken) ? await this.settings.store.spendAttempt(hashOf(browserToken)) : null;
    if (!attempt) return { ok: false, refusal: 'no_attempt' };
    const config = await this.settings.byId(attempt.configId);
    if (!config) return { ok: false, refusal: 'config_gone' };
    // An error answer (RFC 6749 4.1.2.1) is told as the provider's own code, not as a failed check.
    const declined = new URLSearchParams(search).get('error');
    if (declined !== null) return { ok: false, refusal: 'provider_declined', detail: /^[\x20-\x7e]{1,64}$/.test(declined) ? declined : 'error', config };
    const checks = this.box.openJson<AttemptChecks>(attempt.checksSealed);
    const client = await openIdClient();
    let claims: Record<string, unknown> | undefined;
    try {
      const oidc = await discover(config, this.config.webhookAllowLoopback);
      const tokens = await client.authorizationCodeGrant(oidc, new URL(`${this.callbackUrl()}${search}`), {
        pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true,
      });
      const idClaims = tokens.claims() as Record<string, unknown> | undefined;
      // Where the ID token carries no email (claims released by scope at the UserInfo endpoint only, as
      // oidc-provider and some Okta setups do), the email comes from UserInfo, for the same subject.
      claims = idClaims && typeof idClaims.email !== 'string'
        ? await client.fetchUserInfo(oidc, tokens.access_token, String(idClaims.sub)) as Record<string, unknown>
        : idClaims;
    } catch (err) {
      return { ok: false, refusal: 'provider_refused', detail: refusalDetail(err), config };
    }
    const email = typeof claims?.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) return { ok: false, refusal: 'email_missing', config };
    // Some providers (Entra ID) send no email_verified; where one is sent it must be true.
    if (claims && 'email_verified' in claims && claims.email_verified !== true) return { ok: false, refusal: 'email_unverified', detail: email, config };
    if (!emailCovered(email, config.domains)) return { ok: false, refusal: 'foreign_domain', detail: email, config };
    const name = typeof claims?.name === 'string' ? personName(claims.name) : '';
    return { ok: true, config, email, name };
  }
}

/** What failed, in words for the refusal page and the log: openid-client's code and message, never a token. */
function refusalDetail(err: unknown): string {
  const e = err as { code?: string; message?: string; error?: string };
  if (typeof e?.error === 'string') return `the provider answered ${e.error}`;
  if (e?.code && e.message) return `${e.code}: ${e.message}`;
  return providerProblem(err);
}
