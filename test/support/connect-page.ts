/**
 * Driving the connect page over plain HTTP, as a browser without JavaScript would (forms, redirects,
 * one cookie for the OAuth round trip): the API tests and the bench use it; the browser test drives
 * Chromium instead.
 */
import type { TestService } from './service';

export interface PageAnswer { status: number; html: string; location: string | null }

export class ConnectPageClient {
  /** The browser's cookies by name (the OAuth round trip's, the pre-session's and the console session's). */
  readonly cookies = new Map<string, string>();
  /** A new tenant's first owner, as the person completing names themselves. */
  owner = { name: 'Connect Owner', email: `owner-${Math.random().toString(36).slice(2, 10)}@msp.example` };
  constructor(private readonly origin: string, readonly token: string) {}

  get cookie(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      if (value === '' || /max-age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The console session's CSRF token as the page shows it (an existing tenant's page), or ''. */
  static csrfOf(html: string): string {
    return /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  }

  /** Signs in as a member with a magic link read from the service's outbox (the sandbox's mail). */
  async signIn(svc: Pick<TestService, 'services'>, email: string, next = `/connect/${this.token}`): Promise<PageAnswer> {
    const form = await this.get('/sign-in?area=console');
    const csrf = ConnectPageClient.csrfOf(form.html);
    await this.post('/sign-in/email', [['csrf', csrf], ['area', 'console'], ['email', email], ['next', next]]);
    const mail = (await svc.services.outbox.latest(20)).find((m) => m.to === email.toLowerCase());
    if (!mail) throw new Error(`no sign-in mail for ${email}`);
    const link = /https?:\/\/\S+\/sign-in\/link\/\S+/.exec(mail.text)![0];
    const shown = await this.get(new URL(link).pathname + new URL(link).search);
    const hidden = [...shown.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&#(\d+);/g, (_x, c) => String.fromCharCode(Number(c))).replace(/&amp;/g, '&')] as [string, string]);
    return this.post('/sign-in/link', hidden);
  }

  static fromUrl(connectUrl: string): ConnectPageClient {
    const u = new URL(connectUrl);
    return new ConnectPageClient(u.origin, u.pathname.split('/').pop()!);
  }

  async get(path: string): Promise<PageAnswer> {
    const res = await fetch(path.startsWith('http') ? path : `${this.origin}${path}`, { redirect: 'manual', headers: this.cookie ? { cookie: this.cookie } : {} });
    this.keep(res);
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  }

  async post(path: string, form: [string, string][]): Promise<PageAnswer> {
    const res = await fetch(`${this.origin}${path}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded', ...(this.cookie ? { cookie: this.cookie } : {}) },
    });
    this.keep(res);
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  }

  page(): Promise<PageAnswer> {
    return this.get(`/connect/${this.token}`);
  }

  /** The CSRF token the page's forms carry now (an existing tenant's page, signed in), or ''. */
  async csrf(): Promise<string> {
    const shown = await this.page();
    return /<form[^>]*action="\/connect\/[^"]+\/test"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"/.exec(shown.html)?.[1] ?? '';
  }

  async test(kind: string, connector: string, baseUrl: string, credentials: Record<string, string>): Promise<PageAnswer> {
    return this.post(`/connect/${this.token}/test`, [['csrf', await this.csrf()], ['kind', kind], ['connector', connector], ['base_url', baseUrl], ...Object.entries(credentials).map(([k, v]) => [`cred_${k}`, v] as [string, string])]);
  }

  /** The OAuth round trip: our start, the vendor's consent page, its Authorize button, our callback. */
  async authorize(kind: string, decision = 'approve'): Promise<PageAnswer> {
    const start = await this.get(`/connect/${this.token}/oauth/${kind}/start`);
    if (start.status !== 302 || !start.location) return start;
    const consent = await this.get(start.location);
    const hidden = [...consent.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&#(\d+);/g, (_x, c) => String.fromCharCode(Number(c)))] as [string, string]);
    const action = /<form method="post" action="([^"]+)"/.exec(consent.html)![1];
    const back = await this.post(action, [...hidden, ['decision', decision]]);
    const callback = await this.get(back.location!);
    return callback.status === 303 && callback.location ? this.get(callback.location) : callback;
  }

  /** Connect: the grants per kind, the first owner (a new tenant's page ignores nothing else), and `extra` fields (placements). */
  async complete(grants: Record<string, string[]>, extra: [string, string][] = []): Promise<PageAnswer> {
    const done = await this.post(`/connect/${this.token}/complete`, [
      ['csrf', await this.csrf()], ['owner_name', this.owner.name], ['owner_email', this.owner.email],
      ...Object.entries(grants).flatMap(([kind, keys]) => keys.map((k) => [`grant_${kind}`, k] as [string, string])), ...extra,
    ]);
    // Connect answers with a redirect to the completion page (a reload of it does not send Connect again): followed, as a browser does.
    return done.status === 303 && done.location?.startsWith('/connect/progress/') ? this.get(done.location) : done;
  }

  /** The progress key of a completion page. */
  static progressPath(html: string): string {
    return /data-progress-url="([^"]+)\.json"/.exec(html)![1];
  }

  /** Polls the first sync's progress until it is done (bounded). */
  async awaitFirstSync(progressPath: string, tries = 600): Promise<{ done: boolean; connections: { connector: string; resources: { resource: string; records: number; status: string }[] }[] }> {
    for (let i = 0; i < tries; i++) {
      const p = JSON.parse((await this.get(`${progressPath}.json`)).html);
      if (p.done) return p;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the first sync did not finish');
  }
}

/** The simulators' API roots on the test service. */
export function sandboxBase(svc: Pick<TestService, 'url'>) {
  return {
    connectwise: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
    ninjaone: `${svc.url}/sandbox-vendors/ninjaone`,
    pax8: `${svc.url}/sandbox-vendors/pax8/v1`,
  };
}

export const CW_CREDENTIALS = { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' };
export const CW_LIMITED_CREDENTIALS = { ...CW_CREDENTIALS, publicKey: 'sandbox-limited-public', privateKey: 'sandbox-limited-private' };
