/**
 * People over HTTP (docs/architecture.md, People): magic links through the local outbox (/dev/outbox),
 * the same answer for an unknown address, the limits per address and per email, invitations (the
 * operator's invite_member and an owner's from the console), the last owner, a viewer, organisations kept
 * apart, the session id renewed at sign-in, sign out everywhere, and members audited with the person.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

interface Answer { status: number; text: string; headers: Headers }

/** A browser of the test's own: it keeps the cookies the service sets and sends them back. */
class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly address = '127.0.0.1') {}

  async go(path: string, form?: Record<string, string>): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(`${svc.url}${path}`, { method: form ? 'POST' : 'GET', headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      if (attrs.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  /** Follows a 303 like a browser. */
  async follow(a: Answer): Promise<Answer> {
    expect(a.status).toBe(303);
    return this.go(a.headers.get('location')!);
  }
}

const csrfOf = (a: Answer) => /name="csrf" value="([^"]+)"/.exec(a.text)?.[1] ?? '';

/** The newest link the outbox holds for `to` (mail is kept there: SMTP_URL is unset). */
async function lastLinkTo(to: string): Promise<string | null> {
  const mails = await svc.services.outbox.latest(200);
  const mail = mails.find((m) => m.to === to);
  return mail ? /https?:\/\/\S+/.exec(mail.text)![0] : null;
}
const outboxCount = async () => (await svc.services.outbox.latest(1000)).length;

async function askForLink(b: Browser, email: string, area = 'console'): Promise<Answer> {
  const page = await b.go(`/sign-in?area=${area}`);
  return b.go('/sign-in/email', { csrf: csrfOf(page), email, area });
}

async function signInByMail(b: Browser, email: string): Promise<Answer> {
  expect((await askForLink(b, email)).status).toBe(200);
  const link = new URL((await lastLinkTo(email))!);
  const shown = await b.go(link.pathname);
  expect(shown.text).toContain('Continue');
  return b.go('/sign-in/link', { csrf: csrfOf(shown), token: link.pathname.split('/').pop()! });
}

const ISV_OWNER = 'owner@sandbox-isv.example';
const ALPHA_OWNER = 'owner@sandbox-alpha.example';

describe('magic links', () => {
  it('a sandbox owner signs in from the mailed link once; the session id is new; the link does not work twice', async () => {
    const b = new Browser();
    const before = await b.go('/console');
    expect(b.cookies.get('pre_session')).toBeTruthy();
    expect(before.text).toContain('Mail me a sign-in link');
    const done = await signInByMail(b, ALPHA_OWNER);
    expect(done.headers.get('location')).toBe('/console/health');
    const first = b.cookies.get('session')!;
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b.cookies.has('pre_session')).toBe(false);
    const health = await b.follow(done);
    expect(health.status).toBe(200);
    expect(health.text).toContain(ALPHA_OWNER);
    // Signing in again in the same browser renews the session id and ends the old one.
    const again = await signInByMail(b, ALPHA_OWNER);
    expect(again.status).toBe(303);
    expect(b.cookies.get('session')).not.toBe(first);
    const old = new Browser();
    old.cookies.set('session', first);
    expect((await old.go('/console/health')).status).toBe(401);
    // The same link a second time: nothing.
    const link = new URL((await lastLinkTo(ALPHA_OWNER))!);
    const c = new Browser();
    const shown = await c.go(link.pathname);
    const spent = await c.go('/sign-in/link', { csrf: csrfOf(shown), token: link.pathname.split('/').pop()! });
    expect(spent.status).toBe(401);
    expect(c.cookies.has('session')).toBe(false);
  });

  it('answers the same for an address without an account, and mails nothing', async () => {
    const b = new Browser();
    const known = await askForLink(b, ISV_OWNER, 'app');
    const n = await outboxCount();
    const unknown = await askForLink(b, 'nobody@unknown.example', 'app');
    expect(unknown.status).toBe(known.status);
    expect(unknown.text).toBe(known.text);
    expect(await outboxCount()).toBe(n);
  });

  it('a sign-in form without this browser\'s token mails nothing', async () => {
    const n = await outboxCount();
    const b = new Browser();
    const res = await b.go('/sign-in/email', { email: ALPHA_OWNER, csrf: 'x'.repeat(43) });
    expect(res.status).toBe(403);
    expect(await outboxCount()).toBe(n);
  });

  it('is limited per email, whoever asks', async () => {
    const email = 'limit@nowhere.example';
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await askForLink(new Browser(), email)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });
});

describe('organisations, invitations and members', () => {
  const invite = (kind: 'isv' | 'tenant', id: string, email: string, role: string) => svc.graphql(
    'mutation($k: String!, $id: ID!, $e: String!, $r: String!) { invite_member(organisation_kind: $k, organisation_id: $id, email: $e, role: $r) { email role expires_at } }',
    { k: kind, id, e: email, r: role });

  async function accept(b: Browser, email: string, name: string): Promise<Answer> {
    const link = new URL((await lastLinkTo(email))!);
    const shown = await b.go(link.pathname);
    expect(shown.status).toBe(200);
    return b.go('/invitations/accept', { csrf: csrfOf(shown), token: link.pathname.split('/').pop()!, name });
  }

  it('the operator invites, the person accepts once and is listed; an owner invites a viewer who changes nothing', async () => {
    const isvId = svc.sandbox!.isvId;
    const answer = await invite('isv', isvId, 'Lead@Team.example', 'owner');
    expect(answer.errors ?? []).toEqual([]);
    expect(answer.data.invite_member).toMatchObject({ email: 'lead@team.example', role: 'owner' });
    const lead = new Browser();
    const done = await accept(lead, 'lead@team.example', 'Lea Lead');
    expect(done.headers.get('location')).toBe('/app');
    expect((await lead.follow(done)).text).toContain('Signed in as lead@team.example, owner');
    // Single use: the link shows nothing more, and posting it again makes no one a member.
    const spent = new URL((await lastLinkTo('lead@team.example'))!);
    expect((await new Browser().go(spent.pathname)).status).toBe(404);
    const late = new Browser();
    const form = await late.go('/sign-in?area=app');
    expect((await late.go('/invitations/accept', { csrf: csrfOf(form), token: spent.pathname.split('/').pop()!, name: 'x' })).status).toBe(404);
    expect(late.cookies.has('session')).toBe(false);

    const members = await lead.go('/app/members');
    expect(members.text).toContain('lead@team.example');
    const sent = await lead.go('/app/members/invite', { csrf: csrfOf(members), email: 'dev@team.example', role: 'viewer' });
    expect(sent.text).toContain('Invitation mailed to dev@team.example');
    const viewer = new Browser();
    await viewer.follow(await accept(viewer, 'dev@team.example', 'Dee'));
    const asViewer = await viewer.go('/app/members');
    expect(asViewer.text).toContain('dev@team.example');
    expect(asViewer.text).not.toContain('Invite a colleague');
    const tried = await viewer.go('/app/members/invite', { csrf: csrfOf(asViewer), email: 'sneaky@team.example', role: 'owner' });
    expect(tried.status).toBe(403);
    expect(await lastLinkTo('sneaky@team.example')).toBeNull();
  });

  it('the last owner can neither leave nor be demoted; with a second owner they can', async () => {
    const owner = new Browser();
    await owner.follow(await signInByMail(owner, 'owner@sandbox-beta.example'));
    const page = await owner.go('/console/members');
    const me = /name="person_id" value="([^"]+)"/.exec(page.text)![1]!;
    const leave = await owner.go('/console/members/remove', { csrf: csrfOf(page), person_id: me });
    expect(leave.status).toBe(422);
    expect(leave.text).toContain('last owner');
    const demote = await owner.go('/console/members/role', { csrf: csrfOf(page), person_id: me, role: 'viewer' });
    expect(demote.status).toBe(422);
    expect((await owner.go('/console/members')).text).toMatch(/owner@sandbox-beta\.example.*?<td>owner<\/td>/s);
    // With a second owner, the first may step down; then the second is the last one.
    await invite('tenant', svc.betaId, 'second@beta.example', 'owner');
    const second = new Browser();
    await second.follow(await accept(second, 'second@beta.example', 'Sec'));
    const page2 = await owner.go('/console/members');
    expect((await owner.go('/console/members/role', { csrf: csrfOf(page2), person_id: me, role: 'admin' })).status).toBe(200);
    const secondPage = await second.go('/console/members');
    const secondId = [...secondPage.text.matchAll(/name="person_id" value="([^"]+)"/g)].map((m) => m[1]).find((id) => id !== me)!;
    expect((await second.go('/console/members/remove', { csrf: csrfOf(secondPage), person_id: secondId })).status).toBe(422);
  });

  it('a person of tenant A sees nothing of tenant B, and a person of two organisations chooses one', async () => {
    const alpha = svc.alphaId;
    await invite('tenant', alpha, 'both@msp.example', 'admin');
    const b = new Browser();
    await b.follow(await accept(b, 'both@msp.example', 'Bo'));
    await invite('tenant', svc.betaId, 'both@msp.example', 'viewer');
    const c = new Browser();
    const accepted = await accept(c, 'both@msp.example', 'Bo');
    // Accepting binds the new session to the organisation of the invitation.
    const health = await c.follow(accepted);
    expect(health.text).toContain('Sandbox Beta');
    // Signed in by mail, the person belongs to two tenants: the chooser asks which.
    const d = new Browser();
    const signed = await signInByMail(d, 'both@msp.example');
    expect(signed.headers.get('location')).toBe('/sign-in/choose');
    const chooser = await d.follow(signed);
    expect(chooser.text).toContain('Sandbox Alpha');
    const orgs = [...chooser.text.matchAll(/name="org_id" value="([^"]+)"/g)].map((m) => m[1]);
    expect(orgs.sort()).toEqual([svc.alphaId, svc.betaId].sort());
    const chose = await d.go('/sign-in/choose', { csrf: csrfOf(chooser), org_kind: 'tenant', org_id: svc.alphaId });
    const alphaPage = await d.follow(chose);
    expect(alphaPage.text).toContain('Sandbox Alpha');
    // Bound to alpha: beta is nowhere (test/console.test.ts holds another tenant's records and forms to this).
    for (const p of ['/console/health', '/console/members', '/console/audit']) {
      const shown = await d.go(p);
      expect(shown.status).toBe(200);
      expect(shown.text).not.toContain('Sandbox Beta');
      expect(shown.text).not.toContain(svc.betaId);
    }
    // An organisation the person does not belong to cannot be chosen.
    const chooser2 = await d.go('/sign-in/choose');
    const elsewhere = svc.sandbox!.isvId;
    expect((await d.go('/sign-in/choose', { csrf: csrfOf(chooser2), org_kind: 'isv', org_id: elsewhere })).status).toBe(404);
    // The ISV console shows nothing to a session bound to a tenant.
    expect((await d.go('/app/members')).status).toBe(303);
  });

  it('sign out everywhere ends every session of the person', async () => {
    const one = new Browser();
    const two = new Browser();
    await one.follow(await signInByMail(one, ISV_OWNER));
    await two.follow(await signInByMail(two, ISV_OWNER));
    const members = await one.go('/app/members');
    expect(members.status).toBe(200);
    await one.go('/sign-out/everywhere', { csrf: csrfOf(members) });
    expect((await one.go('/app/members')).status).toBe(401);
    expect((await two.go('/app/members')).status).toBe(401);
  });

  it('a member changed in the MSP console is audited with the person as actor', async () => {
    const owner = new Browser();
    await owner.follow(await signInByMail(owner, ALPHA_OWNER));
    const page = await owner.go('/console/members');
    const res = await owner.go('/console/members/invite', { csrf: csrfOf(page), email: 'tech@alpha.example', role: 'viewer' });
    expect(res.status).toBe(200);
    const audit = (await svc.api(`/tenants/${svc.alphaId}/audit?action=member.invite`, { key: svc.alphaMspKey })).body.audit;
    expect(audit[0].detail).toMatchObject({ email: 'tech@alpha.example', role: 'viewer', via: 'console', actor: { kind: 'person', email: ALPHA_OWNER } });
  });
});
