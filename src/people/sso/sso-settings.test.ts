/**
 * Single sign-on settings on the real store, against a real OpenID provider on loopback (its discovery
 * is read before a save): the secret is sealed at rest, an edit without one keeps it, a domain belongs to
 * one organisation, the outbound guard and an unreachable issuer refuse and save nothing.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../db/database';
import { SecretBox } from '../../security/secret-box';
import { testDatabaseOptions, freePort } from '../../../test/support/runtime';
import { startOidcProvider, type TestProvider } from '../../../test/support/oidc-provider';
import { SsoSettings, SsoSettingsRefused, type SsoSettingsInput } from './sso-settings';

let db: Database;
let provider: TestProvider;
let settings: SsoSettings;
const box = new SecretBox(randomBytes(32));
const tenant = { kind: 'tenant' as const, id: randomUUID() };
const isv = { kind: 'isv' as const, id: randomUUID() };
const SECRET = `very-secret-${randomBytes(8).toString('hex')}`;

const input = (over: Partial<SsoSettingsInput> = {}): SsoSettingsInput => ({
  issuer: provider.issuer, clientId: provider.clientId, clientSecret: SECRET, domains: 'Acme.test\nacme-eu.test', requireSso: true, allowJoin: false, ...over,
});

async function refusal(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(SsoSettingsRefused);
  return (err as SsoSettingsRefused).problems;
}

beforeAll(async () => {
  db = await openDatabase(testDatabaseOptions());
  provider = await startOidcProvider({ redirectUri: 'http://127.0.0.1:1/sign-in/oidc/callback', accounts: {} });
  settings = new SsoSettings(db.dataSource, box, { webhookAllowLoopback: true });
}, 60_000);
afterAll(async () => {
  await provider?.close();
  await db?.close();
});

it('keeps the client secret sealed at rest and never shows it', async () => {
  const view = await settings.save(tenant, input(), null);
  expect(view).toMatchObject({ issuer: provider.issuer, clientId: provider.clientId, hasSecret: true, domains: ['acme-eu.test', 'acme.test'], requireSso: true, allowJoin: false });
  expect(JSON.stringify(view)).not.toContain(SECRET);

  const rows: Record<string, unknown>[] = await db.dataSource.query('SELECT * FROM sso_configs WHERE org_id = $1', [tenant.id]);
  expect(rows).toHaveLength(1);
  expect(JSON.stringify(rows[0])).not.toContain(SECRET);
  expect(JSON.stringify(rows[0])).not.toContain(Buffer.from(SECRET).toString('base64'));
  expect(box.open(String(rows[0]!.client_secret_sealed))).toBe(SECRET);
  expect((await settings.forEmail('bob@ACME.test'))?.clientSecret).toBe(SECRET);
});

it('an edit without a secret keeps the stored one; a new one replaces it', async () => {
  await settings.save(tenant, input({ clientSecret: '', requireSso: false, allowJoin: true }), null);
  const kept = await settings.forEmail('bob@acme.test');
  expect(kept).toMatchObject({ clientSecret: SECRET, requireSso: false, allowJoin: true });
  await settings.save(tenant, input({ clientSecret: 'the-new-one' }), null);
  expect((await settings.forEmail('bob@acme.test'))?.clientSecret).toBe('the-new-one');
  await settings.save(tenant, input(), null);
});

it('answers whether a domain requires single sign-on, by exact domain only', async () => {
  expect(await settings.ssoRequiredFor('Alice@Acme.Test')).toBe(true);
  expect(await settings.ssoRequiredFor('alice@sub.acme.test')).toBe(false);
  expect(await settings.ssoRequiredFor('alice@elsewhere.test')).toBe(false);
  expect(await settings.ssoRequiredFor('no address')).toBe(false);
});

it('a domain another organisation covers is refused and nothing of either changes', async () => {
  const problems = await refusal(settings.save(isv, input({ domains: 'isv.test\nacme.test' }), null));
  expect(problems.join(' ')).toContain('acme.test is already covered');
  expect(await settings.view(isv)).toBeNull();
  expect((await settings.forEmail('x@acme.test'))?.org).toEqual(tenant);
  expect(await settings.forEmail('x@isv.test')).toBeNull();
});

it('refuses a first save without a secret, bad domains and a bad issuer, every problem at once', async () => {
  const problems = await refusal(settings.save(isv, input({ clientSecret: '', domains: 'not a domain/x', issuer: 'ftp://idp.test', clientId: '' }), null));
  expect(problems).toHaveLength(4);
  expect(await settings.view(isv)).toBeNull();
});

it('keeps outbound calls to public https unless loopback is allowed, and saves nothing when discovery fails', async () => {
  const strict = new SsoSettings(db.dataSource, box, { webhookAllowLoopback: false });
  expect((await refusal(strict.save(isv, input({ domains: 'isv.test' }), null))).join(' ')).toContain('https');
  const privateIssuer = await refusal(strict.save(isv, input({ domains: 'isv.test', issuer: 'https://10.0.0.7/realm' }), null));
  expect(privateIssuer.join(' ')).toContain('private address');
  const closed = await freePort();
  const unreachable = await refusal(settings.save(isv, input({ domains: 'isv.test', issuer: `http://127.0.0.1:${closed}` }), null));
  expect(unreachable.join(' ')).toContain('discovery document could not be read');
  const wrongIssuer = await refusal(settings.save(isv, input({ domains: 'isv.test', issuer: `${provider.issuer}/other` }), null));
  expect(wrongIssuer.join(' ')).toContain('discovery document could not be read');
  expect(await settings.view(isv)).toBeNull();
});
