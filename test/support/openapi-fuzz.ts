/**
 * A fuzzer generated from the service's own /openapi.json (design.md section 17): for every documented
 * operation it builds a plausible request from the schemas, then breaks it one way at a time (wrong
 * types, missing and extra fields, huge and odd values, bad JSON, wrong content types, bad query
 * values, odd path ids, odd headers, oversize bodies). Every answer must be below 500 (or a documented
 * vendor status: 501 not_supported, 502, 503), every error body an Error or HTTPValidationError, and
 * every answer documented for its operation. It reads the operations from the document, so operations
 * added later are fuzzed without editing this file. `npm test` runs a CI-sized pass, `npm run bench`
 * one of at least 10,000 requests.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import path from 'node:path';
import { fixturesDir } from '../../src/sandbox/fixtures';
import { OpenApiChecker } from './openapi-check';

type Json = any;
export interface FuzzContext {
  baseUrl: string;
  /** Ids of tenants the keys may see; path `{tenant_id}` mostly takes the first. */
  tenantIds: string[];
  isvKey: string;
  mspKey: string;
}

export interface FuzzRequest {
  label: string;
  operation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzFinding { label: string; status: number; body: string }

export interface FuzzReport {
  requests: number;
  byStatus: Record<string, number>;
  /** 500, or a 5xx the service never documents (501/502/503 are vendor statuses it may answer). */
  serverErrors: FuzzFinding[];
  /** Error answers whose body is neither an Error nor an HTTPValidationError. */
  outsideEnvelope: FuzzFinding[];
  /** Answers the operation's OpenAPI entry does not document (status or shape). */
  undocumented: FuzzFinding[];
}

/** The seeded PRNG the fixture generators use (mulberry32), so a failing case replays from its seed. */
export const rng: (seed: number) => () => number =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require(path.join(fixturesDir(), 'seeded-random.js')) as { prng: (seed: number) => () => number }).prng;

const ODD_TEXT = [
  '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\u202e\u202dRTL', '😀'.repeat(500), "'; DROP TABLE tickets;--", '%00', '../../etc/passwd',
  '<script>alert(1)</script>', '{{7*7}}', '${jndi:ldap://x}', ' ', '', '\r\nX-Injected: 1', 'ZALGƠ̸̢͉̞͓̳͚͇̰̩̯̼͕̜̏̇̅̐̾̓̔̾̆ͅ', '\uFEFF', 'null', 'NaN',
];
const ODD_NUMBERS = [0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 1e-320, 999999999999, -0];
const ODD_IDS = [
  'not-a-uuid', '00000000-0000-0000-0000-000000000000', '%00', 'a%00b', '%ud800', '..', '%2e%2e', 'x'.repeat(5000), '%F0%9F%98%80',
  "1'%20OR%20'1'='1", '-1', '99999999999999999999999', '%E2%80%AE', '%20', 'ÅÄÖ',
];
const ODD_QUERY = [
  'limit=0x10', 'limit=1e2', 'limit=%205', 'limit=-1', 'limit=0', 'limit=99999999999999999999', 'limit=1&limit=2', 'cursor=garbage',
  'cursor=%00', 'updated_since=2026-02-30T00:00:00Z', 'updated_since=yesterday', 'updated_since=2026-11-22T10:00:00%2B25:00', 'kind=%00',
  'status=%ud800', 'after=not-an-id', 'period_start=2026-13-01', 'q=' + 'x'.repeat(10_000), '%ZZ=1', 'limit[]=1',
];
const ODD_JSON = ['{"a":', 'null', '[]', '"text"', '1', '{', '{"dry_run":true,}', '\u0000', '{"a":"\\ud800"}', '{"__proto__":{"x":1}}'];

export class SchemaWalker {
  constructor(private readonly doc: Json) {}

  resolve(s: Json): Json {
    let out = s;
    for (let i = 0; i < 20 && out && out.$ref; i++) out = out.$ref.replace(/^#\//, '').split('/').reduce((o: Json, k: string) => o?.[k], this.doc);
    return out ?? {};
  }

  /** A plausible value for a schema: its example, an enum member, or a made-up value of its type. */
  sample(schema: Json, r: () => number, depth = 0): Json {
    const s = this.resolve(schema);
    if (s.example !== undefined) return s.example;
    if (s.examples?.length) return s.examples[0];
    if (s.default !== undefined && r() < 0.3) return s.default;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[Math.floor(r() * s.enum.length)];
    const alts = s.oneOf ?? s.anyOf;
    if (alts) {
      const nonNull = alts.filter((a: Json) => this.resolve(a).type !== 'null');
      return this.sample(nonNull[Math.floor(r() * nonNull.length)] ?? alts[0], r, depth);
    }
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x: Json) => this.sample(x, r, depth)));
    const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
    if (depth > 6) return null;
    switch (type) {
      case 'string':
        if (s.format === 'date-time') return '2026-11-01T10:00:00Z';
        if (s.format === 'date') return '2026-11-01';
        if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
        if (s.format === 'email') return 'someone@example.com';
        if (s.format === 'uri') return 'https://receiver.example.com/hook';
        return 'fuzz';
      case 'integer': return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 10, 3));
      case 'number': return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 10, 2.5));
      case 'boolean': return r() < 0.5;
      case 'array': {
        const n = Math.max(s.minItems ?? 1, 1);
        return Array.from({ length: n }, () => this.sample(s.items ?? {}, r, depth + 1));
      }
      case 'object':
      default: {
        if (!s.properties) return type === 'object' ? {} : 'fuzz';
        const out: Record<string, Json> = {};
        const required = new Set<string>(s.required ?? []);
        for (const [k, v] of Object.entries(s.properties)) {
          if (required.has(k) || r() < 0.5) out[k] = this.sample(v, r, depth + 1);
        }
        return out;
      }
    }
  }

  /** The (property path, schema) pairs of an object schema, one level deep and into nested objects. */
  fields(schema: Json, prefix: string[] = [], depth = 0): { path: string[]; schema: Json; required: boolean }[] {
    const s = this.resolve(schema);
    const out: { path: string[]; schema: Json; required: boolean }[] = [];
    if (!s.properties || depth > 3) return out;
    const required = new Set<string>(s.required ?? []);
    for (const [k, v] of Object.entries(s.properties)) {
      out.push({ path: [...prefix, k], schema: v, required: required.has(k) });
      out.push(...this.fields(v, [...prefix, k], depth + 1));
    }
    return out;
  }
}

function setAt(obj: Json, path: string[], value: Json, remove = false): Json {
  const copy = structuredClone(obj ?? {});
  let o = copy;
  for (const k of path.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== 'object') o[k] = {};
    o = o[k];
  }
  if (remove) delete o[path[path.length - 1]];
  else o[path[path.length - 1]] = value;
  return copy;
}

interface DocOperation { method: string; template: string; op: Json }

export function documentedOperations(doc: Json): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [template, methods] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(methods)) {
      if (['get', 'post', 'put', 'delete', 'patch'].includes(method)) out.push({ method: method.toUpperCase(), template, op });
    }
  }
  return out;
}

/** The request an operation takes, with its path filled in (valid ids where it can). */
export function baseRequest(doc: Json, o: DocOperation, ctx: FuzzContext, r: () => number, walker = new SchemaWalker(doc)) {
  const params: Json[] = (o.op.parameters ?? []).map((p: Json) => walker.resolve(p));
  const pathValues: Record<string, string> = {};
  for (const p of params.filter((x) => x.in === 'path')) {
    pathValues[p.name] = p.name === 'tenant_id' ? ctx.tenantIds[0] : String(p.example ?? p.schema?.example ?? walker.sample(p.schema ?? {}, r));
  }
  const query: string[] = [];
  for (const p of params.filter((x) => x.in === 'query')) {
    if (p.required || r() < 0.3) {
      const v = p.example ?? p.schema?.example ?? walker.sample(p.schema ?? {}, r);
      if (v !== null && v !== undefined && typeof v !== 'object') query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(String(v))}`);
    }
  }
  const bodySchema = o.op.requestBody?.content?.['application/json']?.schema;
  let body: Json = bodySchema ? walker.sample(bodySchema, r) : undefined;
  // Previews by default: a fuzz run must not pile up vendor writes (a few commits are tried on purpose).
  if (body && typeof body === 'object' && !Array.isArray(body) && 'dry_run' in (walker.resolve(bodySchema).properties ?? {})) body.dry_run = true;
  return { pathValues, query, body, bodySchema, params };
}

function fill(template: string, values: Record<string, string>, raw = false): string {
  return template.replace(/\{([^}]+)\}/g, (_m, name) => (raw ? values[name] : encodeURIComponent(values[name] ?? 'x')));
}

/** `count` requests for one operation: the plausible one first, then one mutation each. */
export function casesFor(doc: Json, o: DocOperation, ctx: FuzzContext, count: number, seed: number): FuzzRequest[] {
  const r = rng(seed);
  const walker = new SchemaWalker(doc);
  const name = o.op.operationId ?? `${o.method} ${o.template}`;
  const out: FuzzRequest[] = [];
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  for (let i = 0; i < count; i++) {
    const b = baseRequest(doc, o, ctx, r, walker);
    const key = r() < 0.75 ? ctx.isvKey : ctx.mspKey;
    const headers: Record<string, string> = { 'x-api-key': key };
    let pathValues = { ...b.pathValues };
    let rawPath = false;
    let query = [...b.query];
    let body: string | undefined = b.body === undefined ? undefined : JSON.stringify(b.body);
    let label = 'plausible';
    const fields = b.bodySchema ? walker.fields(b.bodySchema) : [];
    let mutation = i === 0 ? -1 : Math.floor(r() * 14);
    // GET and DELETE carry no body (fetch refuses one): their mutations go to the query, path and headers.
    const bodyless = o.method === 'GET' || o.method === 'DELETE';
    if (bodyless && mutation >= 0 && ![8, 9, 10, 11].includes(mutation)) mutation = pick([8, 8, 9, 9, 10, 11]);
    switch (mutation) {
      case 0: if (fields.length) { const f = pick(fields); body = JSON.stringify(setAt(b.body, f.path, undefined, true)); label = `drop ${f.path.join('.')}`; } break;
      case 1: if (fields.length) {
        const f = pick(fields);
        const wrong = pick<Json>([42, 'text', true, [], {}, null, [1, 2], { a: { b: { c: 1 } } }]);
        body = JSON.stringify(setAt(b.body, f.path, wrong)); label = `wrong type ${f.path.join('.')}=${JSON.stringify(wrong)}`;
      } break;
      case 2: body = JSON.stringify(setAt(b.body ?? {}, ['unexpected_' + Math.floor(r() * 100)], 'x')); label = 'extra field'; break;
      case 3: if (fields.length) { const f = pick(fields); body = JSON.stringify(setAt(b.body, f.path, 'x'.repeat(200_000))); label = `huge string ${f.path.join('.')}`; } break;
      case 4: if (fields.length) { const f = pick(fields); const v = pick(ODD_TEXT); body = JSON.stringify(setAt(b.body, f.path, v)); label = `odd text ${f.path.join('.')}=${JSON.stringify(v).slice(0, 40)}`; } break;
      case 5: if (fields.length) { const f = pick(fields); const v = pick(ODD_NUMBERS); body = JSON.stringify(setAt(b.body, f.path, v)).replace('1e-320', '1e-320'); label = `odd number ${f.path.join('.')}=${v}`; } break;
      case 6: body = pick(ODD_JSON); label = `bad JSON ${JSON.stringify(body)}`; break;
      case 7: headers['content-type'] = pick(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']); label = `content-type ${headers['content-type']}`; body ??= 'a=1'; break;
      case 8: query.push(pick(ODD_QUERY)); label = `query ${query[query.length - 1].slice(0, 60)}`; break;
      case 9: {
        const names = Object.keys(pathValues);
        if (names.length) { const n = pick(names); pathValues = { ...pathValues, [n]: pick(ODD_IDS) }; rawPath = true; label = `path ${n}=${pathValues[n].slice(0, 40)}`; }
        break;
      }
      case 10: headers['idempotency-key'] = pick(['x'.repeat(300), '\u00e9\u00e8', 'k', ' ', 'a'.repeat(8000)]).replace(/[^\x20-\xff]/g, '?'); label = 'idempotency-key header'; break;
      case 11: headers['x-api-key'] = pick(['', 'sk_' + 'x'.repeat(5000), 'sk_live_nope', "' OR 1=1 --", ctx.isvKey + ' ']); label = 'odd key'; break;
      case 12: body = JSON.stringify({ ...(b.body ?? {}), padding: 'x'.repeat(1_100_000) }); label = 'body over 1 MB'; break;
      case 13: if (b.body && typeof b.body === 'object' && 'dry_run' in b.body) {
        body = JSON.stringify({ ...b.body, dry_run: false, idempotency_key: `fuzz-${seed}-${i}` }); label = 'commit';
      } break;
      default: break;
    }
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const path = fill(o.template, pathValues, rawPath) + (query.length ? `?${query.join('&')}` : '');
    out.push({ label: `${name} [${label}] seed=${seed}#${i}`, operation: name, method: o.method, path, headers, body });
  }
  return out;
}

export class FuzzRunner {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });
  private readonly envelope: ValidateFunction[];
  private readonly checker: OpenApiChecker;

  constructor(private readonly doc: Json, private readonly ctx: FuzzContext) {
    addFormats(this.ajv);
    this.envelope = ['Error', 'HTTPValidationError'].map((n) => this.ajv.compile({ $ref: `#/components/schemas/${n}`, components: doc.components }));
    this.checker = new OpenApiChecker(doc);
  }

  /** Operations whose requests should not be fuzzed (none by default: `skip` is for a bench that must not reset the sandbox). */
  async run(opts: { perOperation: number; seed: number; skip?: (operationId: string) => boolean; concurrency?: number }): Promise<FuzzReport> {
    const report: FuzzReport = { requests: 0, byStatus: {}, serverErrors: [], outsideEnvelope: [], undocumented: [] };
    const requests: FuzzRequest[] = [];
    documentedOperations(this.doc).forEach((o, n) => {
      if (opts.skip?.(o.op.operationId ?? '')) return;
      requests.push(...casesFor(this.doc, o, this.ctx, opts.perOperation, opts.seed * 1000 + n));
    });
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const req = requests[next++];
        await this.send(req, report);
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
    return report;
  }

  private async send(req: FuzzRequest, report: FuzzReport): Promise<void> {
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${this.ctx.baseUrl}${req.path}`, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual' });
      status = res.status;
      text = await res.text();
    } catch (err) {
      // The server closed the connection without an answer: as bad as a 500.
      status = 599;
      text = String((err as Error).cause ?? err);
    }
    report.requests++;
    report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    const finding = { label: req.label, status, body: text.slice(0, 400) };
    if (status === 500 || status >= 504) report.serverErrors.push(finding);
    if (status >= 400) {
      let body: unknown;
      try { body = JSON.parse(text); } catch { body = undefined; }
      if (!this.envelope.some((v) => v(body))) report.outsideEnvelope.push(finding);
    }
    let problem: string | null = null;
    try {
      problem = this.checker.check(req.method, `${this.ctx.baseUrl}${req.path.replace(/\?.*$/, '')}`, status, text);
    } catch { /* a path URL cannot parse never reached a route */ }
    if (problem && status < 500) report.undocumented.push({ ...finding, body: problem.slice(0, 400) });
  }
}

/** The findings of a report, a line each, for a failing assertion's message. */
export function describeFindings(findings: FuzzFinding[], max = 15): string {
  return findings.slice(0, max).map((f) => `${f.status} ${f.label}: ${f.body.replace(/\s+/g, ' ').slice(0, 240)}`).join('\n');
}
