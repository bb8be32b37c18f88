/**
 * The documented reads on both sandbox tenants: envelopes and record shapes exactly as declared,
 * `vendor` and `raw` carrying the same payload, pagination complete and disjoint, bad query
 * parameters answered 422 (never 500), and the limited PSA connector's 501s.
 */
import type { ZodType } from 'zod';
import { AuditList } from '../src/audit/audit.schemas';
import * as RecordSchemas from '../src/records/record.schemas';
import { HTTPValidationError } from '../src/errors/error-body.schemas';
import * as TenantSchemas from '../src/tenants/tenant.schemas';

const S = { ...RecordSchemas, ...TenantSchemas, AuditList, HTTPValidationError };
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

const LISTS: { path: string; items: string; schema: ZodType; limitedPsa501?: boolean }[] = [
  { path: 'tickets', items: 'tickets', schema: S.TicketList },
  { path: 'devices', items: 'devices', schema: S.DeviceList },
  { path: 'agreements', items: 'agreements', schema: S.AgreementList, limitedPsa501: true },
  { path: 'members', items: 'members', schema: S.MemberList, limitedPsa501: true },
  { path: 'ticket-boards', items: 'ticket_boards', schema: S.TicketBoardList, limitedPsa501: true },
  { path: 'ticket-statuses', items: 'ticket_statuses', schema: S.TicketStatusList, limitedPsa501: true },
  { path: 'ticket-priorities', items: 'ticket_priorities', schema: S.TicketPriorityList, limitedPsa501: true },
  { path: 'applications', items: 'applications', schema: S.ApplicationList },
  { path: 'incidents', items: 'incidents', schema: S.IncidentList },
];

async function readAll(tenantId: string, path: string, items: string, limit: number) {
  const seen: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    const res = await svc.api(`/tenants/${tenantId}/${path}?${q}`);
    expect(res.status).toBe(200);
    seen.push(...res.body[items]);
    cursor = res.body.next_cursor;
    if (!cursor) return seen;
  }
  throw new Error('pagination did not end');
}

describe('GET /tenants', () => {
  it('lists the three sandbox tenants with their connections', async () => {
    const res = await svc.api('/tenants');
    expect(res.status).toBe(200);
    S.TenantList.parse(res.body);
    const slugs = res.body.tenants.map((t: any) => t.slug).sort();
    expect(slugs).toEqual(['sandbox-alpha', 'sandbox-beta', 'sandbox-gamma']);
    const alpha = res.body.tenants.find((t: any) => t.slug === 'sandbox-alpha');
    expect(alpha.sandbox).toBe(true);
    expect(alpha.connections.map((c: any) => c.connector).sort()).toEqual(['connectwise', 'ninjaone', 'pax8']);
  });
});

describe.each([
  ['sandbox-alpha', () => svc.alphaId, false],
  ['sandbox-beta', () => svc.betaId, true],
])('lists on %s', (_slug, tenant, limitedPsa) => {
  it.each(LISTS)('$path: envelope and records as declared, vendor.native equals raw', async ({ path, items, schema, limitedPsa501 }) => {
    const res = await svc.api(`/tenants/${tenant()}/${path}?limit=500`);
    if (limitedPsa && limitedPsa501) {
      expect(res.status).toBe(501);
      expect(res.body.code).toBe('not_supported');
      expect(res.body.doc_url).toMatch(/\/docs\/errors#not_supported$/);
      return;
    }
    expect(res.status).toBe(200);
    expect(() => schema.parse(res.body)).not.toThrow();
    expect(res.body.sandbox).toBe(true);
    expect(res.body.served_from).toBe('store');
    expect(res.body.last_synced_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    const records: any[] = res.body[items];
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.vendor).not.toBeNull();
      expect(r.vendor.native).toEqual(r.raw);
      expect(typeof r.vendor.connector).toBe('string');
      expect(Object.keys(r.raw).length).toBeGreaterThan(0);
      for (const line of r.lines ?? []) expect(line.vendor.native).toEqual(line.raw);
    }
  });

  it.each(LISTS.filter((l) => !(limitedPsa && l.limitedPsa501)))('$path: pages are complete and disjoint', async ({ path, items }) => {
    const all = await readAll(tenant(), path, items, 500);
    const paged = await readAll(tenant(), path, items, 7);
    const key = (r: any) => `${r.source ?? ''}:${r.connection_id ?? ''}:${r.source_id ?? r.id}`;
    expect(paged.map(key)).toEqual(all.map(key));
    expect(new Set(paged.map(key)).size).toBe(paged.length);
  });
});

describe('sandbox data as the fixtures promise', () => {
  it('alpha holds the PSA and RMM records the sandbox describes', async () => {
    const t = svc.alphaId;
    const tickets = await readAll(t, 'tickets', 'tickets', 500);
    expect(tickets.length).toBeGreaterThanOrEqual(60);
    const statuses = await readAll(t, 'ticket-statuses', 'ticket_statuses', 500);
    expect(statuses.length).toBeGreaterThanOrEqual(8);
    // Tickets cover every status of the board list.
    expect(new Set(tickets.map((x) => x.native_status)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(tickets.map((x) => x.status))).toEqual(new Set(['new', 'in_progress', 'waiting', 'resolved', 'closed']));
    expect((await readAll(t, 'ticket-boards', 'ticket_boards', 500)).length).toBeGreaterThanOrEqual(3);
    expect((await readAll(t, 'ticket-priorities', 'ticket_priorities', 500)).length).toBeGreaterThanOrEqual(4);
    const members = await readAll(t, 'members', 'members', 500);
    expect(members.length).toBeGreaterThanOrEqual(12);
    expect(members.some((m) => m.active === false)).toBe(true);
    const devices = await readAll(t, 'devices', 'devices', 500);
    expect(devices.length).toBeGreaterThanOrEqual(30);
    expect(devices.some((d) => d.online === false)).toBe(true);
    expect(devices.some((d) => d.needs_attention === true)).toBe(true);
    expect(devices.some((d) => d.patches_pending > 0)).toBe(true);
    expect((await readAll(t, 'applications', 'applications', 500)).length).toBeGreaterThanOrEqual(150);
    const agreements = await readAll(t, 'agreements', 'agreements', 500);
    expect(agreements.length).toBeGreaterThanOrEqual(6);
    expect(agreements.some((a) => a.status !== 'active')).toBe(true);
    expect(agreements.reduce((n, a) => n + a.lines.length, 0)).toBeGreaterThanOrEqual(25);
  });

  it('beta holds tickets from the limited PSA connector and devices of its own', async () => {
    const tickets = await readAll(svc.betaId, 'tickets', 'tickets', 500);
    expect(tickets.length).toBeGreaterThanOrEqual(60);
    expect(new Set(tickets.map((x) => x.source))).toEqual(new Set(['halopsa']));
    const alphaDevices = await readAll(svc.alphaId, 'devices', 'devices', 500);
    const betaDevices = await readAll(svc.betaId, 'devices', 'devices', 500);
    expect(betaDevices.length).toBeGreaterThanOrEqual(30);
    const alphaHosts = new Set(alphaDevices.map((d) => d.hostname));
    expect(betaDevices.filter((d) => alphaHosts.has(d.hostname)).length).toBeLessThan(betaDevices.length);
  });
});

describe('query parameters', () => {
  it.each([
    ['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=abc', 'limit'], ['limit=1.5', 'limit'],
    ['cursor=not-a-cursor', 'cursor'], ['updated_since=yesterday', 'updated_since'], ['color=blue', 'color'],
    ['limit=0x10', 'limit'], ['limit=1e2', 'limit'], ['limit=%205', 'limit'], ['updated_since=2026-02-30T00:00:00Z', 'updated_since'],
  ])('%s gives 422 HTTPValidationError naming the parameter', async (qs, param) => {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?${qs}`);
    expect(res.status).toBe(422);
    expect(() => S.HTTPValidationError.parse(res.body)).not.toThrow();
    expect(res.body.detail.some((d: any) => d.loc[0] === 'query' && d.loc.includes(param))).toBe(true);
  });

  it('a tenant id that names nothing visible, a malformed one included, is 404 not_found', async () => {
    for (const id of ['not-a-uuid', '00000000-0000-0000-0000-000000000000', '%00', 'x'.repeat(300)]) {
      const res = await svc.api(`/tenants/${id}/tickets`);
      expect({ id, status: res.status, code: res.body.code }).toEqual({ id, status: 404, code: 'not_found' });
    }
  });

  it('a request-schema failure lists every problem, not only the first', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=0&color=blue&cursor=nope`);
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['query.color', 'query.cursor', 'query.limit']);
  });

  it('updated_since filters by the vendor update time', async () => {
    const all = await readAll(svc.alphaId, 'tickets', 'tickets', 500);
    const times = all.map((t) => t.updated_at).filter(Boolean).sort();
    const middle = times[Math.floor(times.length / 2)];
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500&updated_since=${encodeURIComponent(middle)}`);
    expect(res.status).toBe(200);
    expect(res.body.tickets.length).toBeGreaterThan(0);
    expect(res.body.tickets.length).toBeLessThan(all.length);
    for (const t of res.body.tickets) expect(t.updated_at >= middle).toBe(true);
  });

  it('undeclared body properties and malformed JSON give 422, never 500', async () => {
    const extra = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: { full: false, color: 'blue' } });
    expect(extra.status).toBe(422);
    expect(extra.body.detail).toEqual([{ loc: ['body', 'color'], msg: expect.any(String), type: 'extra_forbidden' }]);
    const wrongType = await svc.api('/sandbox/reset', { method: 'POST', json: { tenant_id: 42 } });
    expect(wrongType.status).toBe(422);
    const broken = await svc.api('/sandbox/reset', { method: 'POST', body: '{"tenant_id":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(422);
    expect(broken.body.detail[0].type).toBe('json_invalid');
  });
});

describe('connections, status and audit', () => {
  it('connections show each connection, its sync state and the caller grants, never credentials', async () => {
    const res = await svc.api(`/tenants/${svc.betaId}/connections`);
    expect(res.status).toBe(200);
    S.ConnectionList.parse(res.body);
    const psa = res.body.connections.find((c: any) => c.kind === 'psa');
    expect(psa).toMatchObject({ connector: 'halopsa', limited: true, sync_status: 'ok' });
    expect(psa.grants).toContain('psa.ticket.create');
    expect(psa.grants).not.toContain('psa.company.events');
    expect(JSON.stringify(res.body)).not.toMatch(/sandbox-secret/);
  });

  it('status reports every connection synced', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/status`);
    expect(res.status).toBe(200);
    S.TenantStatus.parse(res.body);
    expect(res.body.healthy).toBe(true);
    expect(res.body.connections).toHaveLength(3);
    for (const c of res.body.connections) expect(c.resources.every((r: any) => r.last_status === 'ok')).toBe(true);
  });

  it('audit lists the sync outcomes, newest first, page by page', async () => {
    const first = await svc.api(`/tenants/${svc.alphaId}/audit?limit=1`);
    expect(first.status).toBe(200);
    S.AuditList.parse(first.body);
    expect(first.body.audit).toHaveLength(1);
    expect(first.body.audit[0].action).toMatch(/^sync\./);
    const second = await svc.api(`/tenants/${svc.alphaId}/audit?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.audit[0].id).not.toBe(first.body.audit[0].id);
    expect(second.body.audit[0].created_at <= first.body.audit[0].created_at).toBe(true);
  });
});

describe('last_synced_at', () => {
  it('a list read while the store is emptied (a sandbox reset) does not answer synced; the next read does', async () => {
    const before = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`);
    expect(before.body.last_synced_at).not.toBeNull();
    // The reset's own signal (server.ts wires it to the sandbox's store-emptied listeners), given while the
    // rows are read from the real store: the time beside them, cached before, no longer holds.
    const records = svc.services.records as unknown as { store: { rows: (...a: unknown[]) => Promise<unknown[]> } };
    const rows = records.store.rows.bind(records.store);
    const spy = jest.spyOn(records.store, 'rows').mockImplementationOnce(async (...a: unknown[]) => {
      const out = await rows(...a);
      svc.services.records.emptied();
      return out;
    });
    try {
      const during = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`);
      expect(during.status).toBe(200);
      expect(during.body.last_synced_at).toBeNull();
    } finally {
      spy.mockRestore();
    }
    expect((await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`)).body.last_synced_at).toBe(before.body.last_synced_at);
  });
});
