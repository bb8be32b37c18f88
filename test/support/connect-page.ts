/**
 * Driving the connect page over plain HTTP, as a browser without JavaScript would (forms, redirects,
 * one cookie for the OAuth round trip): the API tests and the bench use it; the browser test drives
 * Chromium instead.
 */
import type { TestService } from './service';

export interface PageAnswer { status: number; html: string; location: string | null }

export class ConnectPageClient {
  cookie = '';
  constructor(private readonly origin: string, readonly token: string) {}

  static fromUrl(connectUrl: string): ConnectPageClient {
    const u = new URL(connectUrl);
    return new ConnectPageClient(u.origin, u.pathname.split('/').pop()!);
  }

  async get(path: string): Promise<PageAnswer> {
    const res = await fetch(path.startsWith('http') ? path : `${this.origin}${path}`, { redirect: 'manual', headers: this.cookie ? { cookie: this.cookie } : {} });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  }

  async post(path: string, form: [string, string][]): Promise<PageAnswer> {
    const res = await fetch(`${this.origin}${path}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded', ...(this.cookie ? { cookie: this.cookie } : {}) },
    });
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  }

  page(): Promise<PageAnswer> {
    return this.get(`/connect/${this.token}`);
  }

  test(kind: string, connector: string, baseUrl: string, credentials: Record<string, string>): Promise<PageAnswer> {
    return this.post(`/connect/${this.token}/test`, [['kind', kind], ['connector', connector], ['base_url', baseUrl], ...Object.entries(credentials).map(([k, v]) => [`cred_${k}`, v] as [string, string])]);
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

  complete(grants: Record<string, string[]>): Promise<PageAnswer> {
    return this.post(`/connect/${this.token}/complete`, Object.entries(grants).flatMap(([kind, keys]) => keys.map((k) => [`grant_${kind}`, k] as [string, string])));
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
