/**
 * The examples work. Every operation in /openapi.json carries an example (one entry in
 * src/rest/examples.ts); each is run as "Try it out" would run it against a freshly started sandbox, and
 * the answer must be the documented status and schema (svc.api checks both against /openapi.json).
 * None changes the sandbox: every read answers the same before and after all of them ran. The README's
 * curl examples are run the same way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, type TestService } from './support/service';

type Param = { in: string; name: string; example?: unknown; required?: boolean };
type Op = {
  operationId: string; parameters?: Param[]; requestBody?: { required?: boolean; content: Record<string, { example?: unknown }> };
  'x-example-key'?: 'isv' | 'msp'; 'x-example-needs'?: string; 'x-example-status'?: number;
};
interface Example { method: string; url: string; body: unknown; key: 'isv' | 'msp'; op: Op }

let svc: TestService;
let doc: { paths: Record<string, Record<string, Op>> };

beforeAll(async () => {
  svc = await startTestService();
  doc = (await svc.api('/openapi.json')).body as typeof doc;
}, 120_000);
afterAll(async () => { await svc?.close(); });

/** Every operation as "Try it out" fills it in; the sandbox reset last, since it re-seeds what the others read. */
function examplesOf(): Example[] {
  const out: Example[] = [];
  for (const [p, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      let url = p;
      const query = new URLSearchParams();
      for (const param of op.parameters ?? []) {
        if (param.in === 'path') url = url.replace(`{${param.name}}`, encodeURIComponent(String(param.example)));
        if (param.in === 'query' && param.example !== undefined) query.set(param.name, String(param.example));
      }
      const q = query.toString();
      out.push({ method: method.toUpperCase(), url: q ? `${url}?${q}` : url, body: op.requestBody?.content['application/json']?.example, key: op['x-example-key'] ?? 'isv', op });
    }
  }
  return out.sort((a, b) => Number(a.op.operationId === 'reset_sandbox') - Number(b.op.operationId === 'reset_sandbox'));
}

describe('the OpenAPI examples', () => {
  it('every operation has one (add it to src/rest/examples.ts), with every path parameter and required body filled in', () => {
    const missing: string[] = [];
    for (const ex of examplesOf()) {
      const holes = (ex.op.parameters ?? []).filter((p) => p.in === 'path' && p.example === undefined);
      if (!ex.op['x-example-key'] || holes.length || (ex.op.requestBody?.required && ex.body === undefined)) missing.push(ex.op.operationId);
    }
    expect(missing).toEqual([]);
  });

  it('an example that needs an earlier call says so on its operation, where /docs shows it', async () => {
    const register = doc.paths['/tenants/{tenant_id}/ticket-events/webhook']!.post! as Op & { description?: string };
    expect(register['x-example-needs']).toMatch(/receiver of your own/);
    expect(register.description).toContain(register['x-example-needs']);
    expect((await svc.api('/docs/init.js')).body).toMatch(/showExtensions: true/);
  });

  it('names the running sandbox: tenant ids are the alpha tenant\'s', () => {
    const tickets = doc.paths['/tenants/{tenant_id}/tickets']!.get!;
    expect(tickets.parameters!.find((p) => p.name === 'tenant_id')!.example).toBe(svc.alphaId);
  });

  it('a body whose fields all have defaults is optional (POST .../sync takes none) and the POST works without one', async () => {
    const sync = doc.paths['/tenants/{tenant_id}/sync']!.post!;
    expect(sync.requestBody!.required).toBe(false);
    const res = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST' });
    expect(res.status).toBeLessThan(300);
  });

  it('each example answers its documented status and schema on a fresh sandbox, and none changes any list', async () => {
    const before = await snapshot();
    const wrong: string[] = [];
    for (const ex of examplesOf()) {
      if (!ex.op['x-example-key']) continue;
      const key = ex.key === 'msp' ? svc.alphaMspKey : svc.key;
      // svc.api throws on a status or body the document does not declare.
      const res = await svc.api(ex.url, { method: ex.method, key, ...(ex.body !== undefined ? { json: ex.body } : {}) });
      const expected = ex.op['x-example-status'];
      const ok = expected ? res.status === expected
        // An example that needs an earlier call gets a coded refusal (an Error envelope) on a fresh sandbox.
        : ex.op['x-example-needs'] ? (res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status !== 500 && typeof (res.body as { code?: unknown }).code === 'string')
          : res.status >= 200 && res.status < 300;
      if (!ok) wrong.push(`${ex.op.operationId} ${ex.method} ${ex.url} -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    expect(wrong).toEqual([]);
    const after = await snapshot();
    const changed = Object.keys(before).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    expect(changed.map((k) => `${k}: ${firstDifference(before[k], after[k])}`)).toEqual([]);
  }, 240_000);

  it('names what exists once the ISV has made it: a ticket it created is the ticket_ref of write_ticket, and the click previews', async () => {
    const created = await svc.api(`/tenants/${svc.alphaId}/tickets`, { method: 'POST', json: { company_name: 'Contoso Ltd', summary: 'Examples: a linked ticket', dry_run: false, idempotency_key: `examples-${Date.now()}` } });
    expect(created.status).toBe(201);
    const ref = created.body.ticket_ref;
    const fresh = (await svc.api('/openapi.json')).body as typeof doc;
    const write = fresh.paths['/tenants/{tenant_id}/tickets/write']!.post!;
    expect(write['x-example-needs']).toBeUndefined();
    const body = write.requestBody!.content['application/json']!.example as { ticket_ref: string };
    expect(body.ticket_ref).toBe(String(ref));
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets/write`, { method: 'POST', json: body });
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
  });
});

/**
 * Every read of the document (GET with its example's parameters, every page), keyed by operation: what a
 * click could change. Left out: the audit log and the request log (they record every call, previews included, by design) and
 * what moves with time or a sync run alone (sync times, lag, the API budget's use, the schedule).
 */
const MOVES_WITH_TIME = new Set(['last_synced_at', 'synced_at', 'last_attempt_at', 'lag_seconds', 'interval_seconds', 'next_check_at', 'budget', 'sync', 'last_fetched', 'last_mode', 'request_id']);
async function snapshot(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const ex of examplesOf()) {
    if (ex.method !== 'GET' || ex.op.operationId === 'list_audit' || ex.op.operationId === 'list_requests') continue;
    const key = ex.key === 'msp' ? svc.alphaMspKey : svc.key;
    const pages: unknown[] = [];
    const url = new URL(ex.url, 'http://x');
    if ((ex.op.parameters ?? []).some((p) => p.in === 'query' && p.name === 'limit')) url.searchParams.set('limit', '500');
    for (let i = 0; i < 50; i++) {
      const res = await svc.api(url.pathname + url.search, { key });
      pages.push({ status: res.status, body: withoutTime(res.body) });
      const next = (res.body as { next_cursor?: string | null })?.next_cursor;
      if (!next) break;
      url.searchParams.delete('after');
      url.searchParams.set('cursor', next);
    }
    out[ex.op.operationId] = pages;
  }
  return out;
}
function withoutTime(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutTime);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !MOVES_WITH_TIME.has(k)).map(([k, x]) => [k, withoutTime(x)]));
}
function firstDifference(a: unknown, b: unknown, at = ''): string {
  if (JSON.stringify(a) === JSON.stringify(b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference((a as any)[k], (b as any)[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at}: ${JSON.stringify(a)?.slice(0, 200)} -> ${JSON.stringify(b)?.slice(0, 200)}`;
}

/** A curl line of the README, as its arguments (quotes honoured; no shell beyond that). */
function curlArgs(line: string): string[] {
  const out: string[] = [];
  // Shell words: '...' verbatim, "..." with \" and \\ unescaped, or a bare word.
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? (m[2] !== undefined ? m[2].replace(/\\(["\\$`])/g, '$1') : m[3]!));
  return out;
}

interface ReadmeCurl { line: string; method: string; url: string; headers: Record<string, string>; body?: string; status?: number }

/** Every curl of the README's sh blocks, continuation lines joined, with the status its `# ->` comment promises. */
function readmeCurls(): ReadmeCurl[] {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const out: ReadmeCurl[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    lines.forEach((line, i) => {
      if (!line.startsWith('curl ')) return;
      const args = curlArgs(line.replace(/\s+#.*$/, ''));
      const c: ReadmeCurl = { line, method: 'GET', url: '', headers: {} };
      for (let k = 1; k < args.length; k++) {
        const a = args[k]!;
        if (a === '-X') c.method = args[++k]!;
        else if (a === '-H') { const [n, ...v] = args[++k]!.split(':'); c.headers[n!.trim().toLowerCase()] = v.join(':').trim(); }
        else if (a === '-d') { c.body = args[++k]; if (c.method === 'GET') c.method = 'POST'; }
        else if (a === '-s') continue;
        else c.url = a;
      }
      const promised = /^# -> (\d{3})/.exec(lines[i + 1] ?? '');
      if (promised) c.status = Number(promised[1]);
      out.push(c);
    });
  }
  return out;
}

describe('the README curl examples', () => {
  it('run against the fresh sandbox with the printed ids and keys, each answering a documented success', async () => {
    const [connections, isvs] = await Promise.all([
      svc.api(`/tenants/${svc.alphaId}/connections`),
      svc.api(`/tenants/${svc.alphaId}/grants`, { key: svc.alphaMspKey }),
    ]);
    const psa = (connections.body as any).connections.find((c: { kind: string }) => c.kind === 'psa');
    const isvId = (isvs.body as any).grants[0].isv_id;
    // What `npm start` prints, as this sandbox has them.
    const printed = (s: string) => s
      .replaceAll('http://127.0.0.1:3000', svc.url)
      .replaceAll('sk_sandbox_0000000000000000000000000000dev', svc.key)
      .replace(/sk_msp_sandbox_alpha_\w+/g, svc.alphaMspKey)
      .replaceAll('$KEY', svc.key).replaceAll('$MSP', svc.alphaMspKey)
      .replaceAll('<tenant_id>', svc.alphaId).replaceAll('<alpha tenant_id>', svc.alphaId).replaceAll('$T', svc.alphaId)
      .replaceAll('<isv_id>', isvId).replaceAll('<isv id>', isvId).replaceAll('<connection_id>', psa.id)
      .replaceAll('$ADMIN_TOKEN', svc.config.adminToken);
    const curls = readmeCurls();
    expect(curls.length).toBeGreaterThanOrEqual(8);
    const wrong: string[] = [];
    for (const c of curls) {
      const url = printed(c.url);
      const { 'x-api-key': key, ...headers } = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, printed(v)]));
      const res = await svc.api(url.slice(svc.url.length), { method: c.method, key: key ?? null, headers, ...(c.body ? { body: printed(c.body) } : {}) });
      const ok = c.status ? res.status === c.status : res.status >= 200 && res.status < 300;
      // A webhook receiver must be the reader's own public HTTPS host; this machine resolves none, and says so.
      const ownReceiver = /ticket-events\/webhook$/.test(url) && res.status === 422 && /does not resolve/.test(JSON.stringify(res.body));
      if (!ok && !ownReceiver) wrong.push(`${c.line} -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
