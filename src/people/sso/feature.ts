/**
 * Single sign-on by OpenID Connect for both consoles (docs/architecture.md, Single sign-on): the
 * routes of the flow and of the owner's settings, the section it adds to the sign-in pages, and the
 * rule that refuses a magic link for a domain whose owner requires single sign-on
 * (src/people/sign-in-extensions.ts). It has no operation of its own: people's sign-in is not part of
 * the machine API.
 */
import type { Logger } from 'pino';
import type { RateLimits } from '../../access/rate-limit';
import type { AuditService } from '../../audit/audit.service';
import type { AppConfig } from '../../config/config';
import type { FeatureModule } from '../../operations/feature-module';
import { registerPageScript } from '../../pages/assets';
import type { SecretBox } from '../../security/secret-box';
import type { PeopleStore } from '../people.store';
import type { PeopleSessions } from '../sessions';
import { registerMagicLinkRule, registerSignInSection } from '../sign-in-extensions';
import { domainOfEmail } from './sso-domains';
import { SsoFlow } from './sso-flow';
import { FOLLOW_SCRIPT, signInSection } from './sso-pages';
import { ssoRouter } from './sso-routes';
import type { SsoSettings } from './sso-settings';

/** The services single sign-on uses, and all it sees of the service graph (src/operations/feature-module.ts). */
export interface SsoServices {
  config: Pick<AppConfig, 'publicUrl' | 'webhookAllowLoopback'>;
  box: SecretBox;
  sso: SsoSettings;
  peopleSessions: PeopleSessions;
  peopleStore: PeopleStore;
  audit: AuditService;
  rateLimits: RateLimits;
  logger: Logger;
}

/**
 * The sign-in extensions are registered once per process while the rule asks the settings of the
 * service mounted last (one service per process, but for tests that start several in turn).
 */
let current: SsoSettings | null = null;
let registered = false;

function registerExtensions(): void {
  if (registered) return;
  registered = true;
  registerSignInSection(signInSection);
  registerMagicLinkRule(async (email) => {
    if (!current || !(await current.ssoRequiredFor(email))) return null;
    return `Your organisation requires single sign-on for ${domainOfEmail(email)}: no sign-in link is mailed. Use "Sign in with single sign-on" below.`;
  });
}

export const ssoFeature: FeatureModule<SsoServices> = {
  name: 'sso',
  mount(app, services) {
    current = services.sso;
    registerExtensions();
    const followScript = registerPageScript('sso-continue', FOLLOW_SCRIPT);
    const flow = new SsoFlow(services.sso, services.box, services.config);
    app.use(ssoRouter({
      config: services.config, settings: services.sso, flow, sessions: services.peopleSessions, people: services.peopleStore,
      audit: services.audit, rateLimits: services.rateLimits, logger: services.logger, followScript,
    }));
  },
};
