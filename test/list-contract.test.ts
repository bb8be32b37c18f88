/**
 * One list contract for every list (docs/architecture.md, Reads), checked over every list operation the
 * service declares: the lists are taken from allOperations(), so a new list is covered without touching
 * this file. On the seeded sandbox (alpha), each list: `limit=1` answers one item and a `next_cursor`;
 * walking the cursor returns every item exactly once; the items field is named after the path; `sandbox`
 * is true; `next_cursor` is null on the last page; an unknown parameter, a bad `limit` and a cursor that
 * is malformed, edited or another list's are 422 naming the parameter (never 500).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ZodType } from 'zod';
import { allOperations } from '../src/features';
import type { Operation } from '../src/operations/operation';
import { monthPeriod } from '../src/billing/sandbox-billing';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let receiver: http.Server;
let webhookId = '';
let isvWebhookId = '';

/** GETs that answer one object holding arrays, not a list (each says why). */
const NOT_LISTS: Record<string, string> = {
  tenant_status: "one tenant's sync status; its connections are part of that one answer",
  routing: "one routing configuration; `supported_targets` is one of its fields",
  ask_examples: 'one reference document of the question family ask reads',
  identity_candidates: 'the best few of one ranking (limit says how many), not a collection to page through',
};

/** Query parameters a list requires (documented on the operation; a list with none needs no entry). */
const period = monthPeriod(0);
const REQUIRED_QUERY: Record<string, Record<string, string>> = {
  billing_reconciliation: { period_start: period.start, period_end: period.end },
  // The request log grows with every keyed request: walked over what beforeAll alone made (its two connect sessions).
  list_requests: { route: '/connect-sessions', status: '201' },
};

const shapeOf = (schema: ZodType | undefined): Record<string, ZodType> => ((schema as unknown as { shape?: Record<string, ZodType> })?.shape ?? {});
const isArray = (s: ZodType): boolean => {
  let t: any = s;
  while (t?.def && ['optional', 'nullable', 'default'].includes(t.def.type)) t = t.def.innerType;
  return t?.def?.type === 'array';
};

/** A GET on a collection path (not ending in an id) whose answer holds an array at its top. */
function answersArray(op: Operation): boolean {
  return op.http?.method === 'get' && !op.http.path.endsWith('}') && Object.values(shapeOf(op.responses[0].schema)).some(isArray);
}

const LIST_OPERATIONS = allOperations().filter((op) => answersArray(op) && !(op.name in NOT_LISTS));

/** The naming rule, written out independently of src/shared/paging.ts. */
function expectedItemsField(path: string): string {
  const last = path.split('/').filter((s) => s && !s.includes('{')).pop()!;
  return last.replace(/-/g, '_');
}

function keyFor(op: Operation): string {
  return op.role === 'msp' ? svc.alphaMspKey : svc.key;
}

function urlOf(op: Operation, query: Record<string, string> = {}): string {
  const hook = op.http!.path.startsWith('/webhooks/') ? isvWebhookId : webhookId;
  const path = op.http!.path.replace('{tenant_id}', svc.alphaId).replace('{webhook_id}', hook);
  const q = new URLSearchParams({ ...(REQUIRED_QUERY[op.name] ?? {}), ...query });
  return `${path}?${q}`;
}

/** What tells two items apart: our id (with its side and connection where ids are per side), else the item. */
function identity(item: any): string {
  const id = item.id ?? item.source_id ?? item.ref;
  return id != null ? [item.side ?? '', item.connection_id ?? '', id].join('|') : JSON.stringify(item);
}

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  svc.services.webhooks.retryScale = 0.0001;
  receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('{}')); });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const A = (p: string) => `/tenants/${svc.alphaId}${p}`;

  // Two webhooks, then MSP-side changes: events on the feed and deliveries in the first webhook's log.
  for (const p of ['/one', '/two']) {
    const res = await svc.api(A('/ticket-events/webhook'), { method: 'POST', json: { url: `${hook}${p}` } });
    expect(res.status).toBe(201);
    webhookId ||= res.body.id;
  }
  // Two ISV-wide endpoints: they receive the same changes, so their deliveries list fills too.
  for (const p of ['/isv-one', '/isv-two']) {
    const res = await svc.api('/webhooks', { method: 'POST', json: { url: `${hook}${p}` } });
    expect(res.status).toBe(201);
    isvWebhookId ||= res.body.id;
  }
  for (const change of [{ kind: 'ticket_note', text: 'list contract' }, { kind: 'ticket_status' }, { kind: 'device_offline' }]) {
    const res = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.alphaId, change } });
    expect(res.status).toBe(200);
  }
  // Deliveries settle (the receiver answers 200), so their rows stop changing while the lists are walked.
  for (let i = 0; i < 100; i++) {
    const log = await svc.api(A(`/ticket-events/webhook/${webhookId}/deliveries?limit=500`));
    const isvLog = await svc.api(`/webhooks/${isvWebhookId}/deliveries?limit=500`);
    const settled = (l: any) => l.body.deliveries.length >= 2 && l.body.deliveries.every((d: any) => d.status !== 'pending');
    if (settled(log) && settled(isvLog)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Two connect sessions, so their list has more than one page at limit 1.
  for (const msp of ['List One MSP', 'List Two MSP']) {
    expect((await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: msp, kinds: ['psa'], requested_grants: [] } })).status).toBe(201);
  }
  // A second identity mapping and line mapping beside the sandbox's own.
  await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: (await isvId()), vendor_product_ref: 'list-contract-a', status: 'unmapped' } });
  await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: (await isvId()), vendor_product_ref: 'list-contract-b', status: 'unmapped' } });
}, 180_000);

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await svc?.close();
});

let isv: string | null = null;
async function isvId(): Promise<string> {
  if (!isv) isv = (await svc.api(`/tenants/${svc.alphaId}/grants`, { key: svc.alphaMspKey })).body.grants[0].isv_id;
  return isv!;
}

it('finds the lists of the service in its declaration', () => {
  const names = LIST_OPERATIONS.map((op) => op.name);
  // The lists the issue names, among others (a new list joins by itself).
  for (const name of ['list_tenants', 'list_connections', 'list_grants', 'list_tickets', 'list_boards', 'list_audit', 'list_events', 'list_webhooks',
    'list_webhook_deliveries', 'identity_book', 'identity_mappings', 'identity_unmapped', 'list_isv_costs', 'list_partner_minimums',
    'list_agreement_line_mappings', 'list_charges', 'billing_reconciliation']) {
    expect(names).toContain(name);
  }
  expect(LIST_OPERATIONS.length).toBeGreaterThanOrEqual(29);
});

describe.each(LIST_OPERATIONS.map((op) => [op.name, op] as const))('%s', (_name, op) => {
  const field = expectedItemsField(op.http!.path);

  async function get(query: Record<string, string> = {}) {
    return svc.api(urlOf(op, query), { key: keyFor(op) });
  }

  it('takes limit and cursor, with the documented envelope', () => {
    const query = shapeOf(op.query as ZodType);
    expect(Object.keys(query)).toEqual(expect.arrayContaining(['limit', 'cursor']));
    const answer = shapeOf(op.responses[0].schema);
    expect(Object.keys(answer)).toEqual(expect.arrayContaining([field, 'sandbox', 'next_cursor']));
    expect(answer).not.toHaveProperty('truncated');
  });

  it('pages one item at a time and walks every item exactly once', async () => {
    const whole = await get({ limit: '500' });
    expect(whole.status).toBe(200);
    // A tenant's list says whether the tenant is a sandbox; an ISV-wide list is no one tenant's.
    if (op.http!.path.startsWith('/tenants/')) expect(whole.body.sandbox).toBe(true);
    else expect(typeof whole.body.sandbox).toBe('boolean');
    expect(Array.isArray(whole.body[field])).toBe(true);
    if (whole.body.served_from !== undefined) expect(whole.body.served_from).toBe('store');
    const all: any[] = whole.body[field];
    // Every list has data on the seeded sandbox (with the set-up above): paging is shown, not assumed.
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(whole.body.next_cursor).toBeNull();
    expect(new Set(all.map(identity)).size).toBe(all.length);

    const first = await get({ limit: '1' });
    expect(first.status).toBe(200);
    expect(first.body[field]).toHaveLength(1);
    expect(typeof first.body.next_cursor).toBe('string');

    const walked: any[] = [];
    let cursor: string | null = null;
    for (let i = 0; i <= all.length; i++) {
      const page = await get({ limit: '1', ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      expect(page.body.sandbox).toBe(whole.body.sandbox);
      walked.push(...page.body[field]);
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    expect(cursor).toBeNull();
    expect(walked.map(identity)).toEqual(all.map(identity));
  });

  it('answers 422 to an unknown parameter, a bad limit and a cursor it did not issue', async () => {
    for (const bad of [{ not_a_parameter: '1' }, { limit: '0' }, { limit: '501' }, { limit: 'ten' }] as Record<string, string>[]) {
      const res = await get(bad);
      expect(res.status).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
    const first = await get({ limit: '1' });
    const issued: string = first.body.next_cursor;
    const decoded = JSON.parse(Buffer.from(issued, 'base64url').toString('utf8'));
    const edited = Buffer.from(JSON.stringify([decoded[0], ...decoded.slice(1).map(() => 7)]), 'utf8').toString('base64url');
    const otherList = Buffer.from(JSON.stringify(['another-list', ...decoded.slice(1)]), 'utf8').toString('base64url');
    for (const cursor of ['not a cursor', 'e30', issued.slice(0, -3), edited, otherList, 'x'.repeat(5000)]) {
      const res = await get({ cursor });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body.detail)).toContain('cursor');
    }
  });

  it('takes updated_since where its items have a time', async () => {
    const whole = await get({ limit: '500' });
    const timed = whole.body[field].some((i: any) => ['updated_at', 'created_at', 'synced_at', 'decided_at', 'occurred_at'].some((k) => i[k] != null));
    if (!timed) return;
    const since = await get({ limit: '500', updated_since: '2000-01-01T00:00:00Z' });
    expect(since.status).toBe(200);
    expect(since.body[field].map(identity)).toEqual(whole.body[field].map(identity));
    const future = await get({ updated_since: '2999-01-01T00:00:00Z' });
    expect(future.status).toBe(200);
    expect(future.body[field]).toEqual([]);
    expect((await get({ updated_since: 'yesterday' })).status).toBe(422);
  });
});

it('every GET refuses an unknown query parameter with 422, lists or not', async () => {
  const gets = allOperations().filter((op) => op.http?.method === 'get' && op.role !== 'admin');
  expect(gets.length).toBeGreaterThan(LIST_OPERATIONS.length);
  for (const op of gets) {
    const path = op.http!.path.replace('{tenant_id}', svc.alphaId).replace('{webhook_id}', webhookId).replace(/\{[a-z_]+\}/g, 'x');
    const res = await svc.api(`${path}?not_a_parameter=1`, { key: keyFor(op) });
    expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: 422 });
  }
});
