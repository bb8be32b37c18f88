/**
 * Forms that show a secret run once (docs/architecture.md, Pages): the console's MSP key rotation sent
 * twice at once, then once more (a reload of the result page re-sends the same csrf and idempotency key),
 * rotates once: each answer shows the same new key, which works, and the old one is revoked once. And
 * every audit entry names its actor and surface (docs/architecture.md, Connect sessions and console): a decision made with an ISV key
 * over REST, one made with the MSP key over GraphQL, and one made in the console.
 */
import { ConnectPageClient, sandboxBase } from './support/connect-page';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;

beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

interface Answer { status: number; text: string; headers: Headers }

async function page(path: string, opts: { cookie?: string; form?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(`${svc.url}${path}`, { method: body ? 'POST' : 'GET', headers, body, redirect: 'manual' });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The cookies an answer sets that still hold a value, as a Cookie header. */
const cookiesOf = (a: Answer) => a.headers.getSetCookie().map((c) => c.split(';')[0]!).filter((c) => !c.endsWith('=')).join('; ');

/** Signs in to the console with a one-time link, as a browser does (the link's page, then its form). */
async function signIn(mspKey: string): Promise<string> {
  const link = await svc.api(A('/console-links'), { method: 'POST', key: mspKey });
  expect(link.status).toBe(201);
  const linkPage = await page(new URL(link.body.url).pathname);
  const csrf = /name="csrf" value="([^"]+)"/.exec(linkPage.text)?.[1] ?? '';
  const res = await page('/console/link', { cookie: cookiesOf(linkPage), form: { csrf, token: link.body.url.slice(link.body.url.lastIndexOf('/') + 1) } });
  expect(res.status).toBe(303);
  return cookiesOf(res);
}

const shownKey = (a: Answer) => /id="new-key">(sk_msp_[A-Za-z0-9_-]+)</.exec(a.text)?.[1] ?? null;
type Entry = { action: string; detail: Record<string, any> };
const auditOf = async (key: string, action: string) => (await svc.api(A(`/audit?action=${action}`), { key })).body.audit as Entry[];

describe('a form that shows a secret, sent again', () => {
  it('rotates the MSP key once: a double press and a reload show the same key, which works; the old key is revoked once', async () => {
    const oldKey = svc.alphaMspKey;
    const cookie = await signIn(oldKey);
    const form = await page('/console/key', { cookie });
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const idempotencyKey = /name="idempotency_key" value="([^"]+)"/.exec(form.text)![1]!;
    const fields = { csrf, confirm: 'yes', idempotency_key: idempotencyKey };

    const [first, second] = await Promise.all([page('/console/key/rotate', { cookie, form: fields }), page('/console/key/rotate', { cookie, form: fields })]);
    const reload = await page('/console/key/rotate', { cookie, form: fields });
    expect([first.status, second.status, reload.status]).toEqual([200, 200, 200]);
    const keys = [first, second, reload].map(shownKey);
    expect(keys[0]).toMatch(/^sk_msp_/);
    expect(new Set(keys).size).toBe(1);
    // One press rotated; the others say so, and every one offers the Copy button and its script.
    expect([first, second, reload].filter((a) => a.text.includes('Already rotated')).length).toBe(2);
    for (const a of [first, second, reload]) {
      expect(a.text).toContain('data-copy-target="new-key"');
      expect(a.text).toContain('src="/assets/copy-secret.js"');
    }

    const newKey = keys[0]!;
    expect((await svc.api(A('/charges'), { key: oldKey })).status).toBe(401);
    expect((await svc.api(A('/charges'), { key: newKey })).status).toBe(200);
    const rotations = await auditOf(newKey, 'msp_key.rotate');
    expect(rotations.length).toBe(1);
    expect(rotations[0]!.detail.revoked).toEqual([oldKey.slice(0, rotations[0]!.detail.revoked[0].length)]);
    // The console-made decision names the console and the MSP key the session acted as.
    expect(rotations[0]!.detail).toMatchObject({ via: 'console', actor: { kind: 'msp_key' } });

    // A new form (a new idempotency key) is a new rotation.
    const again = await page('/console/key', { cookie });
    const next = await page('/console/key/rotate', { cookie, form: { csrf, confirm: 'yes', idempotency_key: /name="idempotency_key" value="([^"]+)"/.exec(again.text)![1]! } });
    expect(shownKey(next)).not.toBe(newKey);
    expect((await svc.api(A('/charges'), { key: newKey })).status).toBe(401);
    expect((await auditOf(shownKey(next)!, 'msp_key.rotate')).length).toBe(2);
    (svc as { alphaMspKey: string }).alphaMspKey = shownKey(next)!;
  });

  it('serves the copy script from our own assets', async () => {
    const res = await fetch(`${svc.url}/assets/copy-secret.js`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('navigator.clipboard');
  });
});

describe('the connect page, completed and sent again', () => {
  it('shows the MSP key once with a Copy button; Connect sent again says the link was used and issues no second key', async () => {
    const created = await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Resubmit MSP', kinds: ['distributor'], requested_grants: ['distributor.company.create'] } });
    expect(created.status).toBe(201);
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    expect((await page.page()).status).toBe(200);
    expect((await page.test('distributor', 'pax8', sandboxBase(svc).pax8, { clientId: 'sandbox', clientSecret: 'sandbox-secret' })).status).toBe(303);
    const [a, b] = await Promise.all([page.complete({ distributor: [] }), page.complete({ distributor: [] })]);
    const again = await page.complete({ distributor: [] });
    const answers = [a, b, again];
    // One press connects; the other, at the same moment, finds it connecting (409) or done (410); a reload finds it done.
    expect(answers.filter((x) => x.status === 200)).toHaveLength(1);
    expect(again.status).toBe(410);
    const done = answers.find((x) => x.status === 200)!;
    expect(done.html).toContain('data-copy-target="msp-key-value"');
    expect(new Set(answers.flatMap((x) => x.html.match(/sk_msp_[A-Za-z0-9_-]+/g) ?? [])).size).toBe(1);
    for (const x of answers.filter((y) => y !== done)) expect([409, 410]).toContain(x.status);
    expect(again.html).toContain('This link has been used');
    const tenantId = (await svc.api(`/connect-sessions/${created.body.id}`)).body.tenant_id;
    const keys = await svc.services.ds.query(`SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND kind = 'msp'`, [tenantId]);
    expect(keys[0].n).toBe(1);
  });
});

describe('audit entries name their actor and surface', () => {
  it('a decision made with the ISV key over REST: actor isv_key with its prefix, via api', async () => {
    const res = await svc.api(A('/tickets'), {
      method: 'POST', json: { company_name: 'Contoso Ltd', summary: 'Backup agent stopped', description: 'Seen by the audit test.', priority: 'high', board: '1', dry_run: true },
    });
    expect(res.status).toBe(200);
    const [entry] = await auditOf(svc.key, 'ticket.create.preview');
    expect(entry!.detail).toMatchObject({ via: 'api', actor: { kind: 'isv_key', id: expect.any(String), key_prefix: expect.any(String) } });
    expect(svc.key.startsWith(entry!.detail.actor.key_prefix)).toBe(true);
  });

  it('a decision made with the MSP key over GraphQL: actor msp_key, via graphql', async () => {
    const rows = (await svc.api(A('/grants'), { key: svc.alphaMspKey })).body.grants as { isv_id: string; connection_id: string; keys: string[] }[];
    const row = rows[0]!;
    const res = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.alphaMspKey },
      body: JSON.stringify({
        query: 'mutation($t: ID!, $i: ID!, $c: [ConnectionGrantsInput!]!) { set_grants(tenant_id: $t, isv_id: $i, input: { connections: $c }) { grants { connection_id } } }',
        variables: { t: svc.alphaId, i: row.isv_id, c: [{ connection_id: row.connection_id, keys: row.keys }] },
      }),
    });
    const body = await res.json() as { errors?: unknown };
    expect(body.errors).toBeUndefined();
    const [entry] = await auditOf(svc.alphaMspKey, 'grants.update');
    expect(entry!.detail).toMatchObject({ via: 'graphql', actor: { kind: 'msp_key', key_prefix: expect.any(String) } });
    expect(svc.alphaMspKey.startsWith(entry!.detail.actor.key_prefix)).toBe(true);
  });

  it('every entry of the log names an actor of a known kind and a surface', async () => {
    const all = (await svc.api(A('/audit?limit=200'), { key: svc.alphaMspKey })).body.audit as Entry[];
    expect(all.length).toBeGreaterThan(3);
    for (const e of all) {
      expect({ action: e.action, kind: e.detail.actor?.kind }).toEqual({ action: e.action, kind: expect.stringMatching(/^(person|isv_key|msp_key|operator|system)$/) });
      expect({ action: e.action, via: e.detail.via }).toEqual({ action: e.action, via: expect.stringMatching(/^(api|mcp|graphql|console|connect|system)$/) });
    }
  });
});
