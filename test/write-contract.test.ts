/**
 * The write contract over every write (docs/architecture.md, Writes), one table whose
 * rows are checked against the operation declarations, so that a new write cannot be left out: every
 * operation that previews (its body or query declares `dry_run`) has a row.
 *
 * For each row, a body its commit refuses: the preview of that body answers the same status and code, and
 * nothing reaches the vendor. Where the write takes an idempotency key, the refusal keeps nothing for the
 * key: the corrected body with the same key lands once (the vendor simulator, or the ISV's own receiver,
 * shows exactly one record more) and a replay says so (`idempotent_replay: true`; the replacing cost and
 * minimum rows say `replaced: true`; the charge decisions, which keep no key, change nothing again).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { allOperations } from '../src/features';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: any;
let pax8: any;
let ninja: any;
const imported: string[] = [];
let receiver: http.Server;

beforeAll(async () => {
  // The ISV's import endpoint is a receiver of this test's own, on loopback.
  svc = await startTestService({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  cw = svc.services.simulators!.connectwise;
  pax8 = svc.services.simulators!.pax8;
  ninja = svc.services.simulators!.ninjaone;
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const id = (JSON.parse(raw) as { company: { source_id: string } }).company.source_id;
      imported.push(id);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ref: `wc-imported-${id}` }));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
}, 120_000);
afterAll(async () => {
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  await svc?.close();
});

type Body = Record<string, unknown>;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const B = (p: string) => `/tenants/${svc.betaId}${p}`;
let seq = 0;
const newKey = () => `wc-${seq++}-${process.pid}`;
const count = (rows: any[], pred: (r: any) => boolean) => rows.filter(pred).length;
const cwRows = (resource: string): any[] => cw.list('sandbox-alpha', resource);
const has = (text: string) => (r: unknown) => JSON.stringify(r).includes(text);

/** A company name the alpha ConnectWise holds once, and one it holds twice (an ambiguous match). */
function uniqueCompany(): string {
  const n = new Map<string, number>();
  for (const c of cwRows('companies')) n.set(c.name, (n.get(c.name) ?? 0) + 1);
  return [...n.entries()].find(([, k]) => k === 1)![0];
}
const AMBIGUOUS = 'Lakeshore Family Dental';

/** What the fixtures and earlier rows leave for a row to use. */
const state = { ticketRef: '', member: '', treyResearch: '' };

async function linkedTicket(summary: string): Promise<string> {
  const res = await svc.api(A('/tickets'), { method: 'POST', json: { company_name: uniqueCompany(), summary, dry_run: false, idempotency_key: newKey() } });
  expect(res.status).toBe(201);
  return res.body.ticket_ref;
}

const msp = () => svc.alphaMspKey;
const chargeOn = async (line: string, status: string) =>
  ((await svc.api(A(`/charges?status=${status}&limit=500`), { key: msp() })).body.charges as any[]).find((c) => c.line_source_id === line);
async function decide(line: string, from: string, decision: 'dismiss' | 'restore'): Promise<void> {
  const charge = await chargeOn(line, from);
  const res = await svc.api(A(`/charges/${charge.id}/${decision}`), { method: 'POST', key: msp(), json: { dry_run: false, idempotency_key: newKey() } });
  expect([res.status, res.body.changed]).toEqual([200, true]);
}
/** The id of the charge on a line, whatever its status. */
async function chargeId(line: string): Promise<string> {
  for (const s of ['pending', 'dismissed', 'approved']) {
    const c = await chargeOn(line, s);
    if (c) return c.id;
  }
  throw new Error(`no charge on line ${line}`);
}

const distributorCompany = (name: string) => ({
  name, fan_out: ['distributor'], phone: '206-555-0100', website: 'https://www.example.com',
  address: { street: '1 Main St', city: 'Seattle', state_or_province: 'WA', postal_code: '98101', country: 'US' },
  bill_on_behalf_of_enabled: false, self_service_allowed: true, order_approval_required: false,
});
const cost = (over: Body = {}) => ({
  external_customer_ref: 'wc-cust', product_source_id: 'edr-endpoint', period_start: '2025-05-01', period_end: '2025-05-31',
  actual_quantity: 10, billable_quantity: 10, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 31, ...over,
});
const minimum = (over: Body = {}) => ({ product_source_id: 'wc-product', period_start: '2025-05-01', period_end: '2025-05-31', currency: 'USD', minimum_amount: 100, ...over });
const rowsWithKey = async (path: string, list: string, key: string) =>
  count((await svc.api(A(`${path}?period_start=2025-05-01&period_end=2025-05-31&limit=500`))).body[list], (r) => r.idempotency_key === key);

interface WriteCase {
  /** The operation, by its declared name. */
  op: string;
  /** What is wrong with the refused body. */
  what: string;
  path: () => string | Promise<string>;
  method?: 'POST' | 'DELETE';
  /** The API key (default: the sandbox ISV's). */
  as?: () => string;
  before?: () => Promise<void>;
  refused: () => Body | Promise<Body>;
  refusal: [number, string];
  /** How many records the write has made at the vendor (or the ISV's receiver) so far; `key`: the row's idempotency key. */
  landed?: (key: string) => number | Promise<number>;
  /** The same key, the body corrected (null: the operation never writes, or takes no key). */
  corrected: null | {
    why?: string;
    /** Changes the world the refusal came from (a charge's status) before the corrected request. */
    fix?: () => Promise<void>;
    path?: () => string | Promise<string>;
    as?: () => string;
    body: () => Body | Promise<Body>;
    status: number;
    /** What a second commit with the same key answers; `not_kept`: the key is not stored (`check` says what holds instead). */
    replay: 'stored' | 'replaces' | 'unchanged' | 'not_kept';
    check?: (answer: { status: number; body: any }) => Promise<void>;
  };
  /** Why there is no corrected request. */
  none?: string;
}

const CASES: WriteCase[] = [
  {
    op: 'create_ticket', what: 'a company name two companies share', path: () => A('/tickets'),
    refused: () => ({ company_name: AMBIGUOUS, summary: 'WC ticket create' }), refusal: [409, 'company_match_ambiguous'],
    landed: () => count(cwRows('tickets'), (t) => t.summary === 'WC ticket create'),
    corrected: { body: () => ({ company_name: uniqueCompany(), summary: 'WC ticket create' }), status: 201, replay: 'stored' },
  },
  {
    op: 'write_ticket', what: 'a note action without a note',
    before: async () => { state.ticketRef = await linkedTicket('WC write target'); },
    path: () => A('/tickets/write'),
    refused: () => ({ ticket_ref: state.ticketRef, action: 'note' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('ticket_notes'), has('WC note text')),
    corrected: { body: () => ({ ticket_ref: state.ticketRef, action: 'note', note: { text: 'WC note text' } }), status: 201, replay: 'stored' },
  },
  {
    op: 'write_ticket', what: 'an update that changes nothing', path: () => A('/tickets/write'),
    refused: () => ({ ticket_ref: state.ticketRef, action: 'update' }), refusal: [422, 'validation'],
    landed: () => cw.faults.countRequests(`/service/tickets/${state.ticketRef}`, 'PATCH'),
    corrected: { body: () => ({ ticket_ref: state.ticketRef, action: 'update', summary: 'WC updated summary' }), status: 200, replay: 'stored' },
  },
  {
    op: 'write_ticket', what: 'a close without evidence', path: () => A('/tickets/write'),
    refused: () => ({ ticket_ref: state.ticketRef, action: 'close' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('ticket_notes'), has('WC close evidence')),
    corrected: { body: () => ({ ticket_ref: state.ticketRef, action: 'close', evidence: 'WC close evidence' }), status: 201, replay: 'stored' },
  },
  {
    op: 'write_ticket', what: 'a reopen to a status the board does not have', path: () => A('/tickets/write'),
    refused: () => ({ ticket_ref: state.ticketRef, action: 'reopen', status: 'wc-no-such-status' }), refusal: [422, 'validation'],
    landed: () => cw.faults.countRequests(`/service/tickets/${state.ticketRef}`, 'PATCH'),
    corrected: { body: () => ({ ticket_ref: state.ticketRef, action: 'reopen' }), status: 200, replay: 'stored' },
  },
  {
    op: 'create_time_entry', what: 'no member, which ConnectWise needs',
    before: async () => {
      state.member = (await svc.api(A('/members?limit=500'))).body.members.find((m: any) => m.active).id;
    },
    path: () => A('/time-entries'),
    refused: () => ({ ticket_ref: state.ticketRef, hours: 1.25, billable: true }), refusal: [422, 'validation'],
    landed: () => count(cwRows('time_entries'), (e) => String(e.chargeToId) === state.ticketRef),
    corrected: { body: () => ({ ticket_ref: state.ticketRef, hours: 1.25, billable: true, member: state.member }), status: 201, replay: 'stored' },
  },
  {
    op: 'route_finding', what: 'a company name two companies share', path: () => A('/findings/route'),
    refused: () => ({ kind: 'technical', title: 'WC finding', severity: 'high', company_name: AMBIGUOUS }), refusal: [409, 'company_match_ambiguous'],
    landed: () => count(cwRows('tickets'), (t) => t.summary === 'WC finding'),
    corrected: { body: () => ({ kind: 'technical', title: 'WC finding', severity: 'high', company_name: uniqueCompany() }), status: 201, replay: 'stored' },
  },
  {
    op: 'resolve_finding', what: 'a finding never routed here', path: () => A('/findings/wc-never-routed/resolve'),
    refused: () => ({ evidence: 'fixed' }), refusal: [404, 'not_found'],
    corrected: null, none: 'it takes no idempotency key (the finding id is its subject)',
  },
  {
    op: 'create_company', what: 'a company name two PSA companies share', path: () => A('/companies'),
    refused: () => distributorCompany(AMBIGUOUS), refusal: [409, 'company_match_ambiguous'],
    landed: () => count(pax8.list('sandbox-alpha', 'companies'), (c) => c.name === 'WC Wren Contract Systems'),
    corrected: { body: () => distributorCompany('WC Wren Contract Systems'), status: 201, replay: 'stored' },
  },
  {
    op: 'create_project', what: 'a project header', path: () => A('/projects'),
    refused: () => ({ name: 'WC project', company_name: uniqueCompany() }), refusal: [422, 'project_header_not_supported'],
    corrected: null, none: 'the service never creates a project header (rule 9)',
  },
  {
    op: 'add_project_note', what: 'a note of blanks, which ConnectWise refuses', path: () => A('/projects/12/notes'),
    refused: () => ({ text: '   ' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('project_notes'), has('WC project note')),
    corrected: { body: () => ({ text: 'WC project note' }), status: 201, replay: 'stored' },
  },
  {
    op: 'add_project_item', what: 'another company than the project\'s', path: () => A('/projects/12/items'),
    refused: () => ({ summary: 'WC project item', company_name: AMBIGUOUS }), refusal: [409, 'project_company_cannot_update'],
    landed: () => count(cwRows('project_tickets'), (t) => t.summary === 'WC project item'),
    corrected: { body: () => ({ summary: 'WC project item' }), status: 201, replay: 'stored' },
  },
  {
    op: 'create_agreement', what: 'an agreement header', path: () => A('/agreements'),
    refused: () => ({ name: 'WC agreement', company_name: uniqueCompany() }), refusal: [422, 'agreement_header_not_supported'],
    corrected: null, none: 'the service never creates an agreement header (rule 8)',
  },
  {
    op: 'write_agreement_lines', what: 'add: a product not in the catalogue', path: () => A('/agreements/101/lines'),
    refused: () => ({ verb: 'add', product_source_id: '999999', quantity: 7, effective_date: '2026-12-01' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('additions'), (a) => a.agreementId === 101 && a.product?.id === 3 && a.quantity === 7),
    corrected: { body: () => ({ verb: 'add', product_source_id: '3', quantity: 7, effective_date: '2026-12-01' }), status: 201, replay: 'stored' },
  },
  {
    op: 'write_agreement_lines', what: 'rewrite: a line of no agreement', path: () => A('/agreements/101/lines'),
    refused: () => ({ verb: 'rewrite', line_source_id: '999999', quantity: 11 }), refusal: [422, 'validation'],
    landed: () => count(cwRows('additions'), (a) => a.id === 802 && a.quantity === 11),
    corrected: { body: () => ({ verb: 'rewrite', line_source_id: '802', quantity: 11 }), status: 200, replay: 'stored' },
  },
  {
    op: 'write_agreement_lines', what: 'end: a line of another agreement', path: () => A('/agreements/101/lines'),
    refused: () => ({ verb: 'end', line_source_id: '807', effective_date: '2026-12-31' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('additions'), (a) => a.id === 801 && a.cancelledDate != null),
    corrected: { body: () => ({ verb: 'end', line_source_id: '801', effective_date: '2026-12-31' }), status: 200, replay: 'stored' },
  },
  {
    op: 'write_agreement_lines', what: 'replace: a product not in the catalogue', path: () => A('/agreements/101/lines'),
    refused: () => ({ verb: 'replace', line_source_id: '804', product_source_id: '999999', quantity: 5, effective_date: '2026-12-15' }), refusal: [422, 'validation'],
    landed: () => count(cwRows('additions'), (a) => a.agreementId === 101 && a.product?.id === 2 && a.quantity === 5),
    corrected: { body: () => ({ verb: 'replace', line_source_id: '804', product_source_id: '2', quantity: 5, effective_date: '2026-12-15' }), status: 201, replay: 'stored' },
  },
  {
    op: 'deploy_to_device', what: 'a package not in the catalogue', path: () => A('/devices/104/deploy'),
    refused: () => ({ package_name: 'Install Notepad Deluxe' }), refusal: [422, 'validation'],
    landed: () => count(ninja.runs('sandbox-alpha'), (r) => r.deviceId === 104 && r.scriptId === 302),
    corrected: { body: () => ({ package_name: 'Install Google Chrome' }), status: 200, replay: 'stored' },
  },
  {
    op: 'submit_isv_cost', what: 'an extended cost that is not unit x quantity', path: () => A('/billing/costs'),
    refused: () => cost({ msp_cost_extended: 99 }), refusal: [422, 'validation'],
    landed: (key) => rowsWithKey('/billing/costs', 'costs', key),
    corrected: { body: () => cost(), status: 201, replay: 'replaces' },
  },
  {
    op: 'submit_partner_minimum', what: 'a period that ends before it starts', path: () => A('/billing/partner-minimums'),
    refused: () => minimum({ period_end: '2025-04-30' }), refusal: [422, 'validation'],
    landed: (key) => rowsWithKey('/billing/partner-minimums', 'partner_minimums', key),
    corrected: { body: () => minimum(), status: 201, replay: 'replaces' },
  },
  {
    op: 'delete_agreement_line_mapping', what: 'a mapping that does not exist', method: 'DELETE',
    path: () => A('/agreement-line-mappings/00000000-0000-4000-8000-00000000c0de'),
    refused: () => ({}), refusal: [404, 'not_found'],
    corrected: null, none: 'it takes no idempotency key (deleting again finds nothing)',
  },
  {
    op: 'approve_charge', what: 'a charge the MSP dismissed', as: msp,
    before: () => decide('815', 'pending', 'dismiss'),
    path: async () => A(`/charges/${await chargeId('815')}/approve`),
    refused: () => ({}), refusal: [422, 'request_invalid'],
    landed: () => cw.faults.countRequests('/additions/815', 'PATCH'),
    corrected: { fix: () => decide('815', 'dismissed', 'restore'), body: () => ({}), status: 200, replay: 'stored' },
  },
  {
    op: 'dismiss_charge', what: 'a charge already approved', as: msp,
    path: async () => A(`/charges/${await chargeId('815')}/dismiss`),
    refused: () => ({}), refusal: [422, 'request_invalid'],
    landed: async () => ((await chargeOn('814', 'dismissed')) ? 1 : 0),
    corrected: { path: async () => A(`/charges/${await chargeId('814')}/dismiss`), body: () => ({}), status: 200, replay: 'unchanged' },
  },
  {
    op: 'restore_charge', what: 'a charge already approved', as: msp,
    path: async () => A(`/charges/${await chargeId('815')}/restore`),
    refused: () => ({}), refusal: [422, 'request_invalid'],
    landed: async () => ((await chargeOn('814', 'pending')) ? 1 : 0),
    corrected: { path: async () => A(`/charges/${await chargeId('814')}/restore`), body: () => ({}), status: 200, replay: 'unchanged' },
  },
  {
    op: 'identity_import', what: 'a company that is no leftover of this book',
    before: async () => {
      const port = (receiver.address() as AddressInfo).port;
      expect((await svc.api(A('/identity/import-endpoint'), { method: 'PUT', json: { url: `http://127.0.0.1:${port}/import` } })).status).toBe(200);
      state.treyResearch = String(cwRows('companies').find((c) => c.name === 'Trey Research').id);
    },
    path: () => A('/identity/import'),
    refused: () => ({ company_source_ids: ['wc-no-such-company'] }), refusal: [422, 'validation'],
    landed: () => imported.length,
    corrected: { body: () => ({ company_source_ids: [state.treyResearch] }), status: 201, replay: 'stored' },
  },
  {
    // Last: the corrected request replaces beta's MSP key.
    op: 'rotate_msp_key', what: 'an ISV key, where the MSP\'s is needed', path: () => B('/msp-key/rotate'),
    refused: () => ({}), refusal: [403, 'role_required'],
    corrected: {
      why: 'the new key is shown once and not stored, so the key guards nothing and a second commit would rotate again',
      as: () => svc.betaMspKey, body: () => ({}), status: 201, replay: 'not_kept',
      check: async (answer) => {
        expect((await svc.api(B('/status'), { key: svc.betaMspKey })).status).toBe(401);
        expect((await svc.api(B('/status'), { key: answer.body.key })).status).toBe(200);
      },
    },
  },
];

/** The operations that preview: `dry_run` in their body or their query. */
function previewingOperations(): { name: string; keyed: boolean }[] {
  const fields = (schema: unknown): Record<string, unknown> => ((schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});
  return allOperations()
    .filter((op) => op.kind === 'mutation' && ('dry_run' in fields(op.body) || 'dry_run' in fields(op.query)))
    .map((op) => ({ name: op.name, keyed: 'idempotency_key' in fields(op.body) }));
}

async function send(c: WriteCase, path: string, body: Body, mode: { dry_run: boolean; key?: string }, as?: () => string) {
  const key = (as ?? c.as)?.();
  if (c.method === 'DELETE') return svc.api(`${path}?dry_run=${mode.dry_run}`, { method: 'DELETE', key });
  return svc.api(path, { method: 'POST', key, json: { ...body, dry_run: mode.dry_run, ...(mode.key ? { idempotency_key: mode.key } : {}) } });
}

it('every operation that previews has a row, and only those', () => {
  const declared = previewingOperations().map((o) => o.name).sort();
  expect(declared.length).toBeGreaterThan(15);
  expect([...new Set(CASES.map((c) => c.op))].sort()).toEqual(declared);
  // A keyed write without a corrected request says why.
  for (const c of CASES) if (!c.corrected) expect(c.none).toBeTruthy();
});

describe.each(CASES.map((c) => [`${c.op}: ${c.what}`, c] as const))('%s', (_name, c) => {
  it('the preview refuses what the commit refuses; the corrected body with the same key lands once', async () => {
    await c.before?.();
    const keyed = previewingOperations().find((o) => o.name === c.op)!.keyed;
    const key = newKey();
    const before = await c.landed?.(key);
    const refusedBody = await c.refused();
    const path = await c.path();
    const preview = await send(c, path, refusedBody, { dry_run: true, key: keyed ? key : undefined });
    const commit = await send(c, path, refusedBody, { dry_run: false, key: keyed ? key : undefined });
    expect({ preview: [preview.status, preview.body?.code], commit: [commit.status, commit.body?.code] })
      .toEqual({ preview: c.refusal, commit: c.refusal });
    if (c.landed) expect(await c.landed(key)).toBe(before);
    if (!c.corrected) return;

    const fixed = c.corrected;
    await fixed.fix?.();
    const fixedPath = await (fixed.path ?? c.path)();
    const body = await fixed.body();
    const landed = await send(c, fixedPath, body, { dry_run: false, key }, fixed.as);
    expect([landed.status, landed.body?.code ?? null]).toEqual([fixed.status, null]);
    if (c.landed) expect(await c.landed(key)).toBe(before! + 1);
    if (fixed.replay === 'not_kept') {
      await fixed.check!(landed);
      return;
    }
    const replay = await send(c, fixedPath, body, { dry_run: false, key }, fixed.as);
    expect(replay.status).toBe(fixed.replay === 'replaces' ? 200 : fixed.status);
    if (fixed.replay === 'stored') expect(replay.body.idempotent_replay).toBe(true);
    if (fixed.replay === 'replaces') expect(replay.body.replaced).toBe(true);
    if (fixed.replay === 'unchanged') expect(replay.body.changed).toBe(false);
    if (c.landed) expect(await c.landed(key)).toBe(before! + 1);
  }, 60_000);
});

describe('two commits racing under one key', () => {
  it('a refused body and its corrected twin sent at once: one write at most, and the key then lands the corrected body once', async () => {
    const ref = await linkedTicket('WC race target');
    const member = (await svc.api(A('/members?limit=500'))).body.members.find((m: any) => m.active).id;
    const key = newKey();
    const entries = () => count(cwRows('time_entries'), (e) => String(e.chargeToId) === ref);
    const refused = { ticket_ref: ref, hours: 0.5, billable: true, dry_run: false, idempotency_key: key };
    const corrected = { ...refused, member };
    const answers = await Promise.all([refused, corrected, corrected].map((json) => svc.api(A('/time-entries'), { method: 'POST', json })));
    expect(entries()).toBeLessThanOrEqual(1);
    for (const a of answers) expect([201, 409, 422]).toContain(a.status);
    // Whatever the race left, the corrected body with the key lands, once.
    const again = await svc.api(A('/time-entries'), { method: 'POST', json: corrected });
    expect(again.status).toBe(201);
    expect(entries()).toBe(1);
  }, 60_000);
});

describe('a refusal after a send', () => {
  it('keeps the key bound to its body: another body is 409 idempotency_conflict, the same body lands once', async () => {
    const ref = await linkedTicket('WC vendor refusal target');
    const member = (await svc.api(A('/members?limit=500'))).body.members.find((m: any) => m.active).id;
    const entries = () => count(cwRows('time_entries'), (e) => String(e.chargeToId) === ref);
    const json = { ticket_ref: ref, hours: 0.75, billable: true, member, dry_run: false, idempotency_key: newKey() };
    const fault = (spec: Body | null) => fetch(`${svc.url}/sandbox-vendors/connectwise/_control/faults`, {
      method: spec ? 'POST' : 'DELETE', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` },
      body: spec ? JSON.stringify(spec) : undefined,
    });
    expect((await fault({ status: 400, times: 1, method: 'POST', pathIncludes: '/time/entries' })).status).toBe(204);
    const refused = await svc.api(A('/time-entries'), { method: 'POST', json });
    await fault(null);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(entries()).toBe(0);
    const other = await svc.api(A('/time-entries'), { method: 'POST', json: { ...json, hours: 1 } });
    expect([other.status, other.body.code]).toEqual([409, 'idempotency_conflict']);
    const same = await svc.api(A('/time-entries'), { method: 'POST', json });
    expect(same.status).toBe(201);
    expect(entries()).toBe(1);
  }, 60_000);
});
