/** The request log names no one-time token that a link carries in its path (docs/architecture.md, People). */
import { withoutTokens } from './request-log';

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';

it('replaces the token of every link that carries one, and leaves other paths as they are', () => {
  expect(withoutTokens(`/connect/${TOKEN}`)).toBe('/connect/[token]');
  expect(withoutTokens(`/connect/${TOKEN}/complete`)).toBe('/connect/[token]/complete');
  expect(withoutTokens(`/connect/progress/${TOKEN}.json`)).toBe('/connect/progress/[token]');
  expect(withoutTokens(`/sign-in/link/${TOKEN}`)).toBe('/sign-in/link/[token]');
  expect(withoutTokens(`/invitations/${TOKEN}`)).toBe('/invitations/[token]');
  expect(withoutTokens(`/console/link/${TOKEN}`)).toBe('/console/link/[token]');
  for (const plain of ['/connect/oauth/ninjaone/callback', '/invitations/accept', '/sign-in/link', '/sign-in/email', '/console/link', '/tenants/x/tickets']) {
    expect(withoutTokens(plain)).toBe(plain);
  }
});
