/**
 * The MSP's console over HTTP (docs/architecture.md, Connect sessions and console): what gets nothing
 * (a used or expired link, an ISV key, a session of another tenant, a form without its CSRF token), the
 * session cookie's attributes, sign-out, and the writes it relies on: dismiss previews by default and
 * refuses undeclared fields, restore brings a dismissed charge back, and the reconciliation CSV carries
 * the JSON's figures. Decisions made in the console are audited as the MSP's, with the session.
 */
import { parseCsv } from './support/csv';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const msp = (path: string, init: Parameters<TestService['api']>[1] = {}) => svc.api(path, { ...init, key: svc.alphaMspKey });
const newKey = () => `k-${Math.random().toString(36).slice(2)}`;

beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

interface Answer { status: number; text: string; headers: Headers }

async function page(path: string, opts: { cookie?: string; form?: Record<string, string | string[]>; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.cookie) headers.cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    const f = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.form)) for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
    body = f.toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const res = await fetch(`${svc.url}${path}`, { method: opts.form ? 'POST' : 'GET', headers, body, redirect: 'manual' });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
/** The `name=value` of a cookie the answer sets ('' when it sets none of that name). */
const setCookie = (a: Answer, name = 'session') => a.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0] ?? '';
const cookieOf = (a: Answer) => setCookie(a, 'session');
const csrfOf = (a: Answer) => /name="csrf" value="([^"]+)"/.exec(a.text)?.[1] ?? '';

/** Posts a form shown before sign-in the way a browser does: the page's pre-session cookie and its token. */
async function signInPost(pagePath: string, action: string, form: Record<string, string>): Promise<Answer> {
  const shown = await page(pagePath);
  return page(action, { cookie: setCookie(shown, 'pre_session'), form: { csrf: csrfOf(shown), ...form } });
}

async function link(key = svc.alphaMspKey, tenantId = svc.alphaId): Promise<string> {
  const res = await svc.api(`/tenants/${tenantId}/console-links`, { method: 'POST', key });
  expect(res.status).toBe(201);
  return tokenOf(res.body.url);
}

async function signIn(key = svc.alphaMspKey, tenantId = svc.alphaId): Promise<{ cookie: string; csrf: string }> {
  const token = await link(key, tenantId);
  const res = await signInPost(`/console/link/${token}`, '/console/link', { token });
  expect(res.status).toBe(303);
  const cookie = cookieOf(res);
  const health = await page('/console/health', { cookie });
  expect(health.status).toBe(200);
  return { cookie, csrf: csrfOf(health) };
}

const pendingCharges = async () => (await msp(A('/charges?status=pending'))).body.charges as { id: string; status: string; line_source_id: string }[];

describe('signing in', () => {
  it('a link signs in once: the session cookie is httpOnly and SameSite=Strict; a used link gets nothing', async () => {
    const token = await link();
    // Opening the link shows a button; it is not spent by being fetched.
    expect((await page(`/console/link/${token}`)).text).toContain('Continue to the console');
    const first = await signInPost(`/console/link/${token}`, '/console/link', { token });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/console/health');
    expect(first.headers.getSetCookie().find((c) => c.startsWith('session='))).toMatch(/^session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const again = await signInPost(`/console/link/${token}`, '/console/link', { token });
    expect(again.status).toBe(401);
    expect(cookieOf(again)).toBe('');
    expect(again.text).toContain('has been used, has expired');
  });

  it('an expired link gets nothing', async () => {
    const token = await link();
    await svc.services.ds.query("UPDATE console_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL");
    const res = await signInPost(`/console/link/${token}`, '/console/link', { token });
    expect(res.status).toBe(401);
    expect(cookieOf(res)).toBe('');
  });

  it('login CSRF: a sign-in form posted without this browser\'s token, or with another one, signs no one in', async () => {
    const token = await link();
    const shown = await page(`/console/link/${token}`);
    const other = await page('/console');
    const attempts: { cookie?: string; form: Record<string, string> }[] = [
      { form: { token } },
      { cookie: setCookie(shown, 'pre_session'), form: { token } },
      { cookie: setCookie(shown, 'pre_session'), form: { token, csrf: csrfOf(other) } },
      { cookie: setCookie(other, 'pre_session'), form: { token, csrf: csrfOf(shown) } },
    ];
    for (const attempt of attempts) {
      const res = await page('/console/link', attempt);
      expect(res.status).toBe(403);
      expect(cookieOf(res)).toBe('');
    }
    // An attacker's MSP key auto-posted from another site: refused before the key is looked at.
    const keyed = await page('/console/sign-in', { form: { api_key: svc.betaMspKey } });
    expect(keyed.status).toBe(403);
    expect(cookieOf(keyed)).toBe('');
    // The link was not spent by the refused posts.
    expect((await signInPost(`/console/link/${token}`, '/console/link', { token })).status).toBe(303);
  });

  it('an ISV key gets nothing: no session from the sign-in form, and no page with it as X-API-Key', async () => {
    const res = await signInPost('/console', '/console/sign-in', { api_key: svc.key });
    expect(res.status).toBe(401);
    expect(cookieOf(res)).toBe('');
    expect(res.text).toContain('not an MSP key');
    const pageWithKey = await page('/console/charges', { headers: { 'x-api-key': svc.key } });
    expect(pageWithKey.status).toBe(401);
    expect(pageWithKey.text).not.toContain('Pending (');
    // The console-links operation is the MSP's.
    expect((await svc.api(A('/console-links'), { method: 'POST' })).status).toBe(403);
  });

  it('a sandbox tenant\'s MSP key pasted once signs in; sign-out ends the session', async () => {
    const res = await signInPost('/console', '/console/sign-in', { api_key: svc.alphaMspKey });
    expect(res.status).toBe(303);
    const cookie = cookieOf(res);
    const charges = await page('/console/charges', { cookie });
    expect(charges.status).toBe(200);
    expect(charges.text).toContain('Pending (');
    const out = await page('/console/sign-out', { cookie, form: { csrf: csrfOf(charges) } });
    expect(out.status).toBe(303);
    const after = await page('/console/charges', { cookie });
    expect(after.status).toBe(401);
    expect(after.text).toContain('session has ended');
  });

  it('a session past its idle hour gets nothing', async () => {
    const { cookie } = await signIn();
    await svc.services.ds.query("UPDATE person_sessions SET last_seen_at = now() - interval '61 minutes' WHERE ended_at IS NULL");
    expect((await page('/console/health', { cookie })).status).toBe(401);
  });
});

describe('what a session may do', () => {
  it('a form without its CSRF token changes nothing', async () => {
    const { cookie } = await signIn();
    const [charge] = await pendingCharges();
    for (const form of [{}, { csrf: 'not-the-token' }] as Record<string, string>[]) {
      const res = await page(`/console/charges/${charge!.id}/dismiss`, { cookie, form: { ...form, commit: '1', idempotency_key: newKey() } });
      expect(res.status).toBe(403);
    }
    expect((await pendingCharges()).map((c) => c.id)).toContain(charge!.id);
  });

  it('a session of another tenant sees and changes nothing of this one', async () => {
    const beta = await signIn(svc.betaMspKey, svc.betaId);
    const [charge] = await pendingCharges();
    const list = await page('/console/charges', { cookie: beta.cookie });
    expect(list.text).not.toContain(charge!.id);
    const res = await page(`/console/charges/${charge!.id}/dismiss`, { cookie: beta.cookie, form: { csrf: beta.csrf, commit: '1', idempotency_key: newKey() } });
    expect(res.status).toBe(404);
    expect((await pendingCharges()).map((c) => c.id)).toContain(charge!.id);
  });

  it('dismiss and restore from the console: a preview changes nothing, the commit is audited as the MSP with the session', async () => {
    const { cookie, csrf } = await signIn();
    const [charge] = await pendingCharges();
    const preview = await page(`/console/charges/${charge!.id}/dismiss`, { cookie, form: { csrf } });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('pending → dismissed');
    expect((await pendingCharges()).map((c) => c.id)).toContain(charge!.id);
    const key = /name="idempotency_key" value="([^"]+)"/.exec(preview.text)![1]!;
    const done = await page(`/console/charges/${charge!.id}/dismiss`, { cookie, form: { csrf, commit: '1', idempotency_key: key } });
    expect(done.status).toBe(303);
    expect((await pendingCharges()).map((c) => c.id)).not.toContain(charge!.id);
    const audit = (await msp(A('/audit?action=charge.dismiss.commit'))).body.audit;
    expect(audit[0]).toMatchObject({ subject_ref: charge!.id, outcome: 'ok', detail: { decided_by: 'msp', via: 'console', console_session: expect.any(String) } });
    const restore = await page(`/console/charges/${charge!.id}/restore`, { cookie, form: { csrf, commit: '1', idempotency_key: newKey() } });
    expect(restore.status).toBe(303);
    expect((await pendingCharges()).map((c) => c.id)).toContain(charge!.id);
  });
});

describe('dismiss and restore as writes', () => {
  it('dismiss previews by default and changes nothing; an undeclared field is 422; a commit needs its key', async () => {
    const [charge] = await pendingCharges();
    const before = JSON.stringify(await pendingCharges());
    const preview = await msp(A(`/charges/${charge!.id}/dismiss`), { method: 'POST', json: {} });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ dry_run: true, changed: true, change: { status: { from: 'pending', to: 'dismissed' } }, charge: { status: 'pending' } });
    expect(JSON.stringify(await pendingCharges())).toBe(before);
    const bogus = await msp(A(`/charges/${charge!.id}/dismiss`), { method: 'POST', json: { dry_run: true, bogus_field: 1 } });
    expect(bogus.status).toBe(422);
    expect(JSON.stringify(bogus.body)).toContain('bogus_field');
    const committedBogus = await msp(A(`/charges/${charge!.id}/dismiss`), { method: 'POST', json: { dry_run: false, idempotency_key: newKey(), bogus_field: 1 } });
    expect(committedBogus.status).toBe(422);
    expect((await msp(A(`/charges/${charge!.id}/dismiss`), { method: 'POST', json: { dry_run: false } })).status).toBe(422);
    expect(JSON.stringify(await pendingCharges())).toBe(before);
  });

  it('restore brings a dismissed charge back to pending, previewing first; an ISV key may not', async () => {
    const [charge] = await pendingCharges();
    await msp(A(`/charges/${charge!.id}/dismiss`), { method: 'POST', json: { dry_run: false, idempotency_key: newKey() } });
    const preview = await msp(A(`/charges/${charge!.id}/restore`), { method: 'POST', json: {} });
    expect(preview.body).toMatchObject({ dry_run: true, changed: true, change: { status: { from: 'dismissed', to: 'pending' } }, charge: { status: 'dismissed' } });
    expect((await pendingCharges()).map((c) => c.id)).not.toContain(charge!.id);
    expect((await svc.api(A(`/charges/${charge!.id}/restore`), { method: 'POST', json: {} })).status).toBe(403);
    expect((await msp(A(`/charges/${charge!.id}/restore`), { method: 'POST', json: { dry_run: true, extra: 1 } })).status).toBe(422);
    const res = await msp(A(`/charges/${charge!.id}/restore`), { method: 'POST', json: { dry_run: false, idempotency_key: newKey() } });
    expect(res.body).toMatchObject({ dry_run: false, changed: true, charge: { status: 'pending' } });
    expect((await pendingCharges()).map((c) => c.id)).toContain(charge!.id);
    // Restoring a pending charge changes nothing.
    expect((await msp(A(`/charges/${charge!.id}/restore`), { method: 'POST', json: {} })).body.changed).toBe(false);
  });
});

describe('the reconciliation as CSV', () => {
  it('Accept: text/csv and format=csv answer the JSON\'s figures, and the console downloads the same', async () => {
    const q = 'period_start=2020-01-01&period_end=2030-12-31';
    const json = (await msp(A(`/billing/reconciliation?${q}&limit=500`))).body;
    const byAccept = await msp(A(`/billing/reconciliation?${q}`), { headers: { accept: 'text/csv' } });
    expect(byAccept.status).toBe(200);
    expect(byAccept.headers.get('content-type')).toMatch(/^text\/csv/);
    const byQuery = await msp(A(`/billing/reconciliation?${q}&format=csv`));
    expect(byQuery.body).toBe(byAccept.body);
    const [header, ...rows] = parseCsv(byAccept.body as string);
    const col = (r: string[], name: string) => r[header!.indexOf(name)];
    const dataRows = rows.filter((r) => r[0] === 'row');
    expect(dataRows.length).toBe(json.reconciliation.length);
    json.reconciliation.forEach((r: any, i: number) => {
      expect(Number(col(dataRows[i]!, 'msp_cost'))).toBeCloseTo(r.msp_cost, 2);
      expect(Number(col(dataRows[i]!, 'margin'))).toBeCloseTo(r.margin, 2);
    });
    const total = rows.find((r) => r[0] === 'total')!;
    expect(Number(col(total, 'margin'))).toBeCloseTo(json.totals.margin, 2);
    expect(Number(col(total, 'partner_minimum_shortfall'))).toBeCloseTo(json.totals.partner_minimum_shortfall, 2);
    expect(rows.filter((r) => r[0] === 'unresolved').length).toBe(json.unresolved.length);

    const { cookie } = await signIn();
    const download = await page(`/console/reconciliation.csv?${q}`, { cookie });
    expect(download.headers.get('content-disposition')).toMatch(/attachment/);
    expect(download.text).toBe(byAccept.body);
  });
});

describe('the MSP key', () => {
  it('rotates from the console after a confirmation: the new key is shown once, the old one stops, the session stays', async () => {
    const { cookie, csrf } = await signIn();
    const keyPage = await page('/console/key', { cookie });
    expect(keyPage.text).toContain(svc.alphaMspKey.slice(0, 12));
    const unconfirmed = await page('/console/key/rotate', { cookie, form: { csrf, idempotency_key: newKey() } });
    expect(unconfirmed.status).toBe(422);
    expect((await msp(A('/charges'))).status).toBe(200);
    const rotated = await page('/console/key/rotate', { cookie, form: { csrf, confirm: 'yes', idempotency_key: newKey() } });
    expect(rotated.status).toBe(200);
    const fresh = /id="new-key">(sk_msp_[A-Za-z0-9_-]+)</.exec(rotated.text)![1]!;
    expect((await svc.api(A('/charges'), { key: svc.alphaMspKey })).status).toBe(401);
    expect((await svc.api(A('/charges'), { key: fresh })).status).toBe(200);
    expect((await page('/console/health', { cookie })).status).toBe(200);
    const audit = (await svc.api(A('/audit?action=msp_key.'), { key: fresh })).body.audit;
    expect(audit[0].detail).toMatchObject({ decided_by: 'msp', via: 'console' });
  });
});
