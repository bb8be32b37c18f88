/**
 * How Pax8 is spoken to (vendor-session.ts keeps the token): client credentials exchanged at
 * `<base>/token` (a JSON body with Pax8's audience) for a bearer token that lives 24 hours; a 429 refuses
 * a request before any processing, so a write answered 429 is waited out and resent.
 */
import type { VendorProfile } from '../vendor-session';

export const PAX8_AUDIENCE = 'https://api.pax8.com';

export const pax8Profile: VendorProfile = {
  connector: 'pax8',
  auth: {
    kind: 'oauth-client-credentials', tokenUrl: '/token', encoding: 'json', extra: { audience: PAX8_AUDIENCE }, defaultLifetimeS: 24 * 3600,
  },
  throttling: { resendThrottledWrites: true },
};
