/**
 * One declaration per operation, one handler for every surface: for every operation, the same caller
 * gets equal answers over REST and over the typed GraphQL graph (and over MCP for its four tools),
 * errors included. The table must name every operation: a new one fails here until it has a case.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  execute, getNamedType, isObjectType, isUnionType, parse,
  type GraphQLObjectType, type GraphQLOutputType, type GraphQLType,
} from 'graphql';
import type { Caller } from '../src/access/caller';
import { allOperations } from '../src/features';
import { domainSchema } from '../src/graphql/schema';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let isv: Caller;
let msp: Caller;
let mcp: Client;
const schema = () => domainSchema(allOperations());

beforeAll(async () => {
  svc = await startTestService({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  isv = await svc.services.access.authenticate(svc.key);
  msp = await svc.services.access.authenticate(svc.alphaMspKey);
  mcp = new Client({ name: 'parity', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.key } } }));
}, 120_000);
afterAll(async () => { await mcp?.close().catch(() => undefined); await svc?.close(); });

/** Every field, every member of a union (aliased per member, so that members never clash). */
function selection(type: GraphQLType): string {
  const t = getNamedType(type);
  if (isUnionType(t)) {
    return `{ __typename ${t.getTypes().map((m) => `... on ${m.name} { ${fields(m, `${m.name}__`)} }`).join(' ')} }`;
  }
  return isObjectType(t) ? `{ ${fields(t, '')} }` : '';
}
function fields(t: GraphQLObjectType, alias: string): string {
  return Object.values(t.getFields()).map((f) => `${alias ? `${alias}${f.name}: ` : ''}${f.name} ${selection(f.type)}`).join(' ');
}
/** Undo the member aliases of union answers. */
function unalias(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unalias);
  if (!v || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const prefix = typeof o.__typename === 'string' ? `${o.__typename}__` : null;
  const out: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(o)) {
    if (k === '__typename') continue;
    if (prefix) { if (k.startsWith(prefix)) out[k.slice(prefix.length)] = unalias(value); } else out[k] = unalias(value);
  }
  return out;
}
/** What both surfaces must agree on: nulls and absent fields are one; a replay flag may differ. */
function normal(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normal);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v as Record<string, unknown>)
    // lag_seconds is measured when each answer is made (the two calls may straddle a second).
    .filter(([k, x]) => x !== null && x !== undefined && k !== 'idempotent_replay' && k !== 'lag_seconds').map(([k, x]) => [k, normal(x)]));
}

interface Input { path?: Record<string, string>; query?: Record<string, unknown>; body?: Record<string, unknown> }
type Answer = { ok: unknown } | { error: string };

async function overRest(name: string, caller: Caller, input: Input): Promise<Answer & { status: number }> {
  const op = allOperations().find((o) => o.name === name)!;
  let url = op.http!.path;
  for (const [k, v] of Object.entries(input.path ?? {})) url = url.replace(`{${k}}`, encodeURIComponent(v));
  const qs = new URLSearchParams(Object.entries(input.query ?? {}).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const key = caller.kind === 'msp' ? (caller.tenantId === svc.betaId ? svc.betaMspKey : svc.alphaMspKey) : svc.key;
  const res = await svc.api(`${url}${qs ? `?${qs}` : ''}`, { method: op.http!.method.toUpperCase(), key, ...(op.body ? { json: input.body ?? {} } : {}) });
  if (res.status >= 400) return { status: res.status, error: res.body.code ?? 'request_invalid' };
  return { status: res.status, ok: res.status === 204 ? null : res.body };
}

async function overGraph(name: string, caller: Caller, input: Input): Promise<Answer> {
  const op = allOperations().find((o) => o.name === name)!;
  const root = op.kind === 'query' ? schema().getQueryType()! : schema().getMutationType()!;
  const field = root.getFields()[name];
  const values: Record<string, unknown> = { ...input.path, ...input.query, ...(op.flattenBody ? input.body : {}) };
  if (op.body && !op.flattenBody) values.input = input.body ?? {};
  const args = field.args.filter((a) => a.name in values);
  const vars = args.map((a) => `$${a.name}: ${a.type}`).join(', ');
  const source = `${op.kind} ${vars ? `(${vars})` : ''} { r: ${name}${args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : ''} ${selection(field.type as GraphQLOutputType)} }`;
  const result = await execute({ schema: schema(), document: parse(source), variableValues: values, contextValue: { caller, services: svc.services } });
  if (result.errors?.length) {
    const e = result.errors[0];
    const original = e.originalError as { code?: string; detail?: unknown } | undefined;
    return { error: original?.code ?? (original?.detail ? 'request_invalid' : `graphql: ${e.message}`) };
  }
  return { ok: unalias((result.data as { r: unknown }).r) };
}

async function expectParity(name: string, caller: Caller, input: Input, omit: string[] = []): Promise<Answer & { status: number }> {
  const rest = await overRest(name, caller, input);
  const graph = await overGraph(name, caller, input);
  const strip = (a: Answer) => ('ok' in a ? { ok: normal(drop(a.ok, omit)) } : { error: a.error });
  expect({ name, ...strip(graph) }).toEqual({ name, ...strip(sameClock(rest, graph)) });
  return rest;
}
/**
 * Stamps each answer takes from the clock when it is made (a time entry previewed without a start spans
 * the hours up to now, to the second): the REST answer takes the GraphQL one's stamp when the two are
 * within 5 s, so two calls straddling a second still compare alike, and any other difference still shows.
 */
const CLOCK_FIELDS = new Set(['timeStart', 'timeEnd']);
function sameClock<T>(rest: T, graph: unknown): T {
  if (!rest || typeof rest !== 'object' || !graph || typeof graph !== 'object') return rest;
  const g = graph as Record<string, unknown>;
  const out: Record<string, unknown> = Array.isArray(rest) ? [...rest] as never : { ...rest as Record<string, unknown> };
  for (const [k, v] of Object.entries(out)) {
    const near = CLOCK_FIELDS.has(k) && typeof v === 'string' && typeof g[k] === 'string' && Math.abs(Date.parse(v) - Date.parse(g[k] as string)) <= 5_000;
    out[k] = near ? g[k] : sameClock(v, g[k]);
  }
  return out as T;
}
/**
 * Parity for an answer that holds live counters (webhook deliveries: an event from earlier work may be
 * delivered at any moment): REST, GraphQL, REST again, compared when the two REST answers agree.
 */
async function expectSettledParity(name: string, caller: Caller, input: Input): Promise<Answer & { status: number }> {
  for (let i = 0; i < 10; i++) {
    const before = await overRest(name, caller, input);
    const graph = await overGraph(name, caller, input);
    const after = await overRest(name, caller, input);
    if (JSON.stringify(normal(before)) !== JSON.stringify(normal(after))) { await new Promise((r) => setTimeout(r, 300)); continue; }
    const strip = (a: Answer) => ('ok' in a ? { ok: normal(a.ok) } : { error: a.error });
    expect({ name, ...strip(graph) }).toEqual({ name, ...strip(after) });
    return after;
  }
  return expectParity(name, caller, input);
}
function drop(v: unknown, keys: string[]): unknown {
  if (!keys.length || !v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !keys.includes(k)));
}

const covered = new Set<string>();
const T = () => ({ tenant_id: svc.alphaId });
let seq = 0;
const key = () => `parity-${Date.now()}-${seq++}`;

describe('REST and GraphQL answer alike', () => {
  it('reads of tenants, connections, status and audit', async () => {
    for (const [name, input] of [['list_tenants', {}], ['me', {}], ['list_connections', { path: T() }], ['tenant_status', { path: T() }], ['list_audit', { path: T(), query: { limit: 3 } }]] as const) {
      await expectParity(name, isv, input);
      covered.add(name);
    }
    await expectParity('me', msp, {});
    // Visibility is the same everywhere: a tenant the key cannot see.
    await expectParity('list_connections', isv, { path: { tenant_id: '00000000-0000-0000-0000-000000000000' } });
  });

  it('every record list, and the 501 of a list the limited connector lacks', async () => {
    for (const name of ['list_tickets', 'list_devices', 'list_agreements', 'list_members', 'list_boards', 'list_statuses', 'list_priorities', 'list_applications', 'list_incidents', 'list_contacts', 'list_products', 'list_subscriptions', 'list_projects', 'list_packages']) {
      const first = await expectParity(name, isv, { path: T(), query: { limit: 3 } });
      const cursor = (first as { ok: { next_cursor?: string } }).ok.next_cursor;
      if (cursor) await expectParity(name, isv, { path: T(), query: { limit: 3, cursor } });
      covered.add(name);
    }
    expect((await expectParity('list_members', isv, { path: { tenant_id: svc.betaId } })).status).toBe(501);
    expect((await expectParity('list_tickets', isv, { path: T(), query: { limit: 0 } })).status).toBe(422);
  });

  it('every single-record read, by our id and by source_id, and 404 for what cannot be seen', async () => {
    const reads = allOperations().filter((o) => o.name.startsWith('get_') && o.http?.path.endsWith('/{record_id}'));
    expect(reads.length).toBe(14);
    for (const op of reads) {
      const listPath = op.http!.path.replace('/{record_id}', '').replace('{tenant_id}', svc.alphaId);
      const list = await svc.api(`${listPath}?limit=1`);
      const items = Object.values(list.body as Record<string, unknown>).find(Array.isArray) as { id?: string; source_id: string }[];
      if (items?.[0]) {
        // Agreements, as the interface shows them, have no id of ours: source_id only.
        if (items[0].id) await expectParity(op.name, isv, { path: { ...T(), record_id: items[0].id } });
        const bySource = await expectParity(op.name, isv, { path: { ...T(), record_id: items[0].source_id ?? items[0].id! } });
        expect((bySource as { ok: unknown }).ok).toEqual(items[0]);
      }
      expect((await expectParity(op.name, isv, { path: { ...T(), record_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
      covered.add(op.name);
    }
  });

  it('the events feed, grants (MSP key) and routing', async () => {
    await expectParity('list_events', isv, { path: T(), query: { limit: 5 } });
    expect((await expectParity('list_events', isv, { path: { tenant_id: svc.betaId }, query: { kind: 'company' } })).status).toBe(403);
    await expectParity('list_grants', msp, { path: T() });
    expect((await expectParity('list_grants', isv, { path: T() })).status).toBe(403);
    const grants = (await overRest('list_grants', msp, { path: T() }) as { ok: { grants: any[] } }).ok.grants;
    const psa = grants.find((g) => g.kind === 'psa');
    await expectParity('set_grants', msp, { path: { ...T(), isv_id: psa.isv_id }, body: { connections: [{ connection_id: psa.connection_id, keys: psa.keys }] } });
    await expectParity('routing', isv, { path: T() });
    await expectParity('set_routing', isv, { path: T(), body: { overrides: { technical: 'service_ticket' } } });
    for (const n of ['list_events', 'list_grants', 'set_grants', 'routing', 'set_routing']) covered.add(n);
  });

  it('ticket create, write-back and time: previews alike, and a commit replays alike', async () => {
    const company = 'Contoso Ltd';
    const create = { company_name: company, summary: 'Parity ticket', priority: 'high', idempotency_key: key() };
    await expectParity('create_ticket', isv, { path: T(), body: create });
    const committed = await expectParity('create_ticket', isv, { path: T(), body: { ...create, dry_run: false } });
    expect(committed.status).toBe(201);
    const ref = (committed as { ok: { ticket_ref: string } }).ok.ticket_ref;
    expect((await expectParity('create_ticket', isv, { path: T(), body: { company_name: company, summary: 'x', dry_run: false } })).status).toBe(422);

    const note = { ticket_ref: ref, action: 'note', note: { text: 'Parity note', internal: false }, idempotency_key: key() };
    await expectParity('write_ticket', isv, { path: T(), body: note });
    expect((await expectParity('write_ticket', isv, { path: T(), body: { ...note, dry_run: false } })).status).toBe(201);

    const member = (await svc.api(`/tenants/${svc.alphaId}/members?limit=500`)).body.members.find((m: any) => m.active !== false).id;
    const time = { ticket_ref: ref, hours: 1.5, billable: true, member, idempotency_key: key() };
    await expectParity('create_time_entry', isv, { path: T(), body: time });
    expect((await expectParity('create_time_entry', isv, { path: T(), body: { ...time, dry_run: false } })).status).toBe(201);
    for (const n of ['create_ticket', 'write_ticket', 'create_time_entry']) covered.add(n);
  }, 60_000);

  it('device deploy: preview, refusals and a commit replay alike', async () => {
    const deploy = { package_name: 'Install 7-Zip', idempotency_key: key() };
    const D = (device_id: string) => ({ ...T(), device_id });
    await expectParity('deploy_to_device', isv, { path: D('103'), body: deploy });
    expect((await expectParity('deploy_to_device', isv, { path: D('103'), body: { ...deploy, dry_run: false } })).status).toBe(200);
    expect((await expectParity('deploy_to_device', isv, { path: D('135'), body: { package_name: 'Install 7-Zip' } })).status).toBe(422);
    expect((await expectParity('deploy_to_device', isv, { path: D('no-such-device'), body: { package_name: 'Install 7-Zip' } })).status).toBe(404);
    expect((await expectParity('deploy_to_device', isv, { path: { tenant_id: svc.betaId, device_id: '2003' }, body: { package_name: 'Install 7-Zip' } })).status).toBe(403);
    covered.add('deploy_to_device');
  }, 60_000);

  it('the second RMM (Datto RMM on beta): its lists, single reads and a deploy, alike', async () => {
    const B = { tenant_id: svc.betaId };
    for (const name of ['list_devices', 'list_applications', 'list_incidents', 'list_packages']) await expectParity(name, isv, { path: B, query: { limit: 500 } });
    const devices = (await svc.api(`/tenants/${svc.betaId}/devices?limit=500`)).body.devices.filter((d: any) => d.source === 'dattormm');
    expect(devices.length).toBeGreaterThan(0);
    const device = devices.find((d: any) => d.online && /Windows/.test(d.os ?? ''));
    await expectParity('get_device', isv, { path: { ...B, record_id: device.source_id } });
    // The MSP turns deploy on for the Datto RMM connection (beta withholds it from the sandbox ISV).
    const connectionId = (await svc.api(`/tenants/${svc.betaId}/connections`)).body.connections.find((c: any) => c.connector === 'dattormm').id;
    const datto = (await svc.api(`/tenants/${svc.betaId}/grants`, { key: svc.betaMspKey })).body.grants.find((g: any) => g.connection_id === connectionId);
    expect((await svc.api(`/tenants/${svc.betaId}/grants/${datto.isv_id}`, { key: svc.betaMspKey, method: 'PUT', json: { connections: [{ connection_id: datto.connection_id, keys: [...datto.keys, 'rmm.device.write'] }] } })).status).toBe(200);
    const deploy = { package_name: 'Install 7-Zip', idempotency_key: key() };
    await expectParity('deploy_to_device', isv, { path: { ...B, device_id: device.source_id }, body: deploy });
    expect((await expectParity('deploy_to_device', isv, { path: { ...B, device_id: device.source_id }, body: { ...deploy, dry_run: false } })).status).toBe(200);
    expect((await expectParity('deploy_to_device', isv, { path: { ...B, device_id: device.source_id }, body: { package_name: 'Disk Space Monitor' } })).status).toBe(422);
  }, 60_000);

  it('the third RMM (N-central on gamma): its lists, single reads and the deploy it does not make, alike', async () => {
    const G = { tenant_id: svc.gammaId };
    for (const name of ['list_devices', 'list_applications', 'list_incidents', 'list_packages']) await expectParity(name, isv, { path: G, query: { limit: 500 } });
    const devices = (await svc.api(`/tenants/${svc.gammaId}/devices?limit=500`)).body.devices.filter((d: any) => d.source === 'ncentral');
    expect(devices.length).toBeGreaterThan(0);
    await expectParity('get_device', isv, { path: { ...G, record_id: devices[0].source_id } });
    const deploy = { package_name: 'Install 7-Zip', idempotency_key: key() };
    expect((await expectParity('deploy_to_device', isv, { path: { ...G, device_id: devices[0].source_id }, body: deploy })).status).toBe(501);
    expect((await expectParity('deploy_to_device', isv, { path: { ...G, device_id: devices[0].source_id }, body: { ...deploy, dry_run: false } })).status).toBe(501);
  }, 60_000);

  it('findings: route (preview, commit) and resolve (preview)', async () => {
    const finding = { kind: 'technical', title: 'Parity finding', severity: 'high', company_name: 'Contoso Ltd', idempotency_key: key() };
    await expectParity('route_finding', isv, { path: T(), body: finding });
    expect((await expectParity('route_finding', isv, { path: T(), body: { ...finding, dry_run: false } })).status).toBe(201);
    await expectParity('resolve_finding', isv, { path: { ...T(), finding_id: finding.idempotency_key }, body: {} });
    expect((await expectParity('resolve_finding', isv, { path: { ...T(), finding_id: 'never-routed' }, body: {} })).status).toBe(404);
    covered.add('route_finding');
    covered.add('resolve_finding');
  }, 60_000);

  it('project notes and items: previews alike, a commit replays alike, refusals alike', async () => {
    const P = (id: string) => ({ ...T(), project_source_id: id });
    const note = { text: 'Parity project note', idempotency_key: key() };
    await expectParity('add_project_note', isv, { path: P('12'), body: note });
    expect((await expectParity('add_project_note', isv, { path: P('12'), body: { ...note, dry_run: false } })).status).toBe(201);
    const item = { summary: 'Parity project item', phase: 'Execution', idempotency_key: key() };
    await expectParity('add_project_item', isv, { path: P('12'), body: item });
    expect((await expectParity('add_project_item', isv, { path: P('12'), body: { ...item, dry_run: false } })).status).toBe(201);
    expect((await expectParity('add_project_item', isv, { path: P('11'), body: { summary: 'x' } })).status).toBe(409);
    expect((await expectParity('add_project_note', isv, { path: P('no-such-project'), body: { text: 'x' } })).status).toBe(404);
    expect((await expectParity('add_project_item', isv, { path: P('12'), body: { summary: 'x', company_name: 'Contoso Ltd' } })).status).toBe(409);
    expect((await expectParity('add_project_note', msp, { path: P('12'), body: { text: 'x' } })).status).toBe(403);
    covered.add('add_project_note');
    covered.add('add_project_item');
  }, 60_000);

  it('agreement lines: previews alike, a commit replays alike, refusals alike', async () => {
    const A = (id: string) => ({ ...T(), agreement_source_id: id });
    const add = { verb: 'add', product_source_id: '3', quantity: 2, effective_date: '2026-12-01', idempotency_key: key() };
    await expectParity('write_agreement_lines', isv, { path: A('103'), body: add });
    expect((await expectParity('write_agreement_lines', isv, { path: A('103'), body: { ...add, dry_run: false } })).status).toBe(201);
    expect((await expectParity('write_agreement_lines', isv, { path: A('106'), body: { verb: 'end', line_source_id: '821' } })).status).toBe(404);
    expect((await expectParity('write_agreement_lines', isv, { path: A('103'), body: { verb: 'end', line_source_id: '999999' } })).status).toBe(422);
    expect((await expectParity('write_agreement_lines', isv, { path: A('103'), body: { verb: 'end' } })).status).toBe(422);
    expect((await expectParity('write_agreement_lines', msp, { path: A('103'), body: add })).status).toBe(403);
    covered.add('write_agreement_lines');
  }, 60_000);
  it('billing: cost rows, minimums, mappings, charges and the reconciliation alike', async () => {
    const isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const month = { period_start: '2026-11-01', period_end: '2026-11-30' };
    const cost = { external_customer_ref: 'cust-002', product_source_id: 'edr-endpoint', ...month, actual_quantity: 21, billable_quantity: 21, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 65.1 };
    await expectParity('submit_isv_cost', isv, { path: T(), body: cost });
    expect((await expectParity('submit_isv_cost', isv, { path: T(), body: { ...cost, msp_cost_extended: 60 } })).status).toBe(422);
    expect((await expectParity('submit_isv_cost', msp, { path: T(), body: cost })).status).toBe(403);
    await expectParity('list_isv_costs', isv, { path: T(), query: month });
    await expectParity('list_isv_costs', msp, { path: T(), query: { customer: 'cust-001' } });
    const minimum = { product_source_id: 'edr-endpoint', ...month, currency: 'USD', minimum_amount: 900 };
    await expectParity('submit_partner_minimum', isv, { path: T(), body: minimum });
    await expectParity('list_partner_minimums', isv, { path: T(), query: {} });
    const mapping = { vendor_key: isvId, vendor_product_ref: 'mfa-user', status: 'mapped', agreement_id: '105', agreement_line_ref: '820' };
    expect((await svc.api(`/tenants/${svc.alphaId}/agreement-line-mappings`, { method: 'POST', json: mapping })).status).toBe(201);
    expect((await expectParity('create_agreement_line_mapping', isv, { path: T(), body: mapping })).status).toBe(200);
    expect((await expectParity('create_agreement_line_mapping', isv, { path: T(), body: { ...mapping, agreement_id: '106', agreement_line_ref: '822' } })).status).toBe(422);
    await expectParity('list_agreement_line_mappings', isv, { path: T(), query: {} });
    await expectParity('list_agreement_line_mappings', msp, { path: T(), query: { agreement_id: '101' } });
    expect((await expectParity('delete_agreement_line_mapping', isv, { path: { ...T(), mapping_id: '00000000-0000-4000-8000-00000000000b' } })).status).toBe(404);
    await expectParity('suggest_agreement_line_mapping', isv, { path: T(), body: { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', product_sku: 'EDR-S1' } });
    await expectParity('list_charges', msp, { path: T(), query: { status: 'pending' } });
    // An ISV key gets its own view of the charges (its rows, no prices), alike on both surfaces.
    expect((await expectParity('list_charges', isv, { path: T(), query: {} })).status).toBe(200);
    const charges = (await svc.api(`/tenants/${svc.alphaId}/charges?status=pending`, { key: svc.alphaMspKey })).body.charges;
    const [first, second] = charges;
    await expectParity('approve_charge', msp, { path: { ...T(), charge_id: first.id }, body: {} });
    const betaCharge = (await svc.api(`/tenants/${svc.betaId}/charges`, { key: svc.betaMspKey })).body.charges[0];
    const betaMsp = await svc.services.access.authenticate(svc.betaMspKey);
    expect((await expectParity('approve_charge', betaMsp!, { path: { tenant_id: svc.betaId, charge_id: betaCharge.id }, body: {} })).status).toBe(501);
    expect((await svc.api(`/tenants/${svc.alphaId}/charges/${second.id}/dismiss`, { method: 'POST', key: svc.alphaMspKey, json: { dry_run: false, idempotency_key: 'parity-dismiss' } })).status).toBe(200);
    await expectParity('dismiss_charge', msp, { path: { ...T(), charge_id: second.id } });
    expect((await expectParity('dismiss_charge', msp, { path: { ...T(), charge_id: 'no-such-charge' } })).status).toBe(404);
    expect((await expectParity('restore_charge', msp, { path: { ...T(), charge_id: second.id }, body: {} })).status).toBe(200);
    expect((await expectParity('restore_charge', isv, { path: { ...T(), charge_id: second.id }, body: {} })).status).toBe(403);
    await expectParity('billing_reconciliation', msp, { path: T(), query: month });
    expect((await expectParity('billing_reconciliation', msp, { path: T(), query: { period_start: '2026-11-31', period_end: '2026-11-30' } })).status).toBe(422);
    for (const n of ['submit_isv_cost', 'list_isv_costs', 'submit_partner_minimum', 'list_partner_minimums', 'create_agreement_line_mapping', 'list_agreement_line_mappings',
      'delete_agreement_line_mapping', 'suggest_agreement_line_mapping', 'list_charges', 'approve_charge', 'dismiss_charge', 'restore_charge', 'billing_reconciliation']) covered.add(n);
  }, 60_000);

  it('the console\'s operations: a sign-in link (a new one each time) and the MSP key\'s rotation preview', async () => {
    expect((await expectParity('create_console_link', msp, { path: T() }, ['url', 'expires_at'])).status).toBe(201);
    expect((await expectParity('create_console_link', isv, { path: T() })).status).toBe(403);
    expect((await expectParity('rotate_msp_key', msp, { path: T(), body: {} })).status).toBe(200);
    expect((await expectParity('rotate_msp_key', isv, { path: T(), body: {} })).status).toBe(403);
    for (const n of ['create_console_link', 'rotate_msp_key']) covered.add(n);
  });

  it('Reconnect: a repair page of the MSP\'s own for one connection (a new one each time); an ISV key is refused', async () => {
    const [c] = await svc.services.ds.query(`SELECT id FROM connections WHERE tenant_id = $1 ORDER BY created_at LIMIT 1`, [svc.alphaId]);
    expect((await expectParity('reconnect_connection', msp, { path: { ...T(), connection_id: c.id } }, ['connect_url', 'expires_at'])).status).toBe(201);
    expect((await expectParity('reconnect_connection', isv, { path: { ...T(), connection_id: c.id } })).status).toBe(403);
    expect((await expectParity('reconnect_connection', msp, { path: { ...T(), connection_id: '00000000-0000-4000-8000-00000000000c' } })).status).toBe(404);
    covered.add('reconnect_connection');
  });

  it('ask (answered, not answered, invisible tenant) and its examples', async () => {
    // Settled: an answer's as_of is the last sync of its lists, and the refresh after an earlier case's write
    // may end between the two calls.
    expect((await expectSettledParity('ask', isv, { path: T(), body: { question: 'Top 3 companies by open tickets' } })).status).toBe(200);
    await expectSettledParity('ask', msp, { path: T(), body: { question: 'How many devices are offline?' } });
    await expectParity('ask', isv, { path: T(), body: { question: 'What is the weather in Paris?' } });
    expect((await expectParity('ask', isv, { path: { tenant_id: '00000000-0000-0000-0000-000000000000' }, body: { question: 'How many tickets?' } })).status).toBe(404);
    await expectParity('ask_examples', msp, { path: T() });
    covered.add('ask');
    covered.add('ask_examples');
  });

  it('webhooks: register (a secret of its own each time), list, deliveries, delete', async () => {
    const url = 'http://127.0.0.1:9/parity';
    const a = await overRest('register_webhook', isv, { path: T(), body: { url } });
    const b = await overGraph('register_webhook', isv, { path: T(), body: { url } });
    const shape = (x: Answer) => ('ok' in x ? drop(x.ok, ['id', 'secret', 'created_at']) : x);
    expect(shape(b)).toEqual(shape(a));
    const [idA, idB] = [(a as { ok: { id: string } }).ok.id, (b as { ok: { id: string } }).ok.id];
    await expectSettledParity('list_webhooks', isv, { path: T() });
    await expectSettledParity('list_webhook_deliveries', isv, { path: { ...T(), webhook_id: idA } });
    const restDelete = await overRest('delete_webhook', isv, { path: { ...T(), webhook_id: idA } });
    const graphDelete = await overGraph('delete_webhook', isv, { path: { ...T(), webhook_id: idB } });
    expect(restDelete.status).toBe(204);
    expect(graphDelete).toEqual({ ok: { id: idB, deleted: true } });
    await expectParity('delete_webhook', isv, { path: { ...T(), webhook_id: idA } }); // both: gone, 404
    for (const n of ['register_webhook', 'list_webhooks', 'list_webhook_deliveries', 'delete_webhook']) covered.add(n);
  });

  it('operating webhooks, per tenant and ISV-wide: read, update, rotate, test, retry; the ISV-wide feed', async () => {
    const url = 'http://127.0.0.1:9/parity-operate';
    const none = '00000000-0000-4000-8000-0000000000ee';
    const tenantHook = (await overRest('register_webhook', isv, { path: T(), body: { url } })) as { ok: { id: string } };
    const isvA = (await overRest('register_isv_webhook', isv, { body: { url } })) as { ok: { id: string } } & { status: number };
    const isvB = await overGraph('register_isv_webhook', isv, { body: { url } });
    expect(isvA.status).toBe(201);
    const shape = (x: Answer) => ('ok' in x ? drop(x.ok, ['id', 'secret', 'created_at']) : x);
    expect(shape(isvB)).toEqual(shape(isvA));
    for (const [prefix, path] of [['', { ...T(), webhook_id: tenantHook.ok.id }], ['isv_', { webhook_id: isvA.ok.id }]] as const) {
      await expectSettledParity(`get_${prefix}webhook`, isv, { path });
      // The same change twice: the second answer is the same webhook, changed alike (its updated stamp aside).
      await expectParity(`update_${prefix}webhook`, isv, { path, body: { kinds: ['ticket'], enabled: false } }, ['updated_at']);
      // A rotation mints a secret of its own each time: the rest of the answer alike.
      const rest = await overRest(`rotate_${prefix}webhook_secret`, isv, { path, body: { overlap_seconds: 60 } });
      const graph = await overGraph(`rotate_${prefix}webhook_secret`, isv, { path, body: { overlap_seconds: 60 } });
      const rotatedShape = (x: Answer) => ('ok' in x ? Object.keys(x.ok as object).sort() : x);
      expect(rotatedShape(graph)).toEqual(rotatedShape(rest));
      // An unknown delivery is not retried: refused alike.
      // A test event is sent even to a paused webhook; each send is an event of its own (its webhook-id), timed alone.
      await expectParity(`test_${prefix}webhook`, isv, { path }, ['webhook_id', 'latency_ms']);
      await expectParity(`retry_${prefix}webhook_delivery`, isv, { path: { ...path, delivery_id: none } });
      await expectParity(`get_${prefix}webhook`, isv, { path: { ...path, webhook_id: none } });
    }
    await expectSettledParity('list_isv_webhooks', isv, {});
    await expectSettledParity('list_isv_webhook_deliveries', isv, { path: { webhook_id: isvA.ok.id } });
    const isvIdB = (isvB as { ok: { id: string } }).ok.id;
    expect((await overRest('delete_isv_webhook', isv, { path: { webhook_id: isvA.ok.id } })).status).toBe(204);
    expect(await overGraph('delete_isv_webhook', isv, { path: { webhook_id: isvIdB } })).toEqual({ ok: { id: isvIdB, deleted: true } });
    await expectParity('delete_isv_webhook', isv, { path: { webhook_id: isvA.ok.id } }); // both: gone, 404
    await expectSettledParity('list_isv_events', isv, { query: { limit: 5 } });
    await expectSettledParity('list_isv_events', msp, { query: { limit: 5 } });
    for (const n of ['get_webhook', 'update_webhook', 'rotate_webhook_secret', 'test_webhook', 'retry_webhook_delivery', 'register_isv_webhook',
      'get_isv_webhook', 'update_isv_webhook', 'rotate_isv_webhook_secret', 'test_isv_webhook', 'retry_isv_webhook_delivery', 'list_isv_webhooks',
      'list_isv_webhook_deliveries', 'delete_isv_webhook', 'list_isv_events']) covered.add(n);
  });

  it('connect sessions: open (a link of its own each time), read, list, cancel', async () => {
    const body = { msp_name: 'Parity MSP', kinds: ['psa'], requested_grants: ['psa.ticket.events'] };
    const a = await overRest('create_connect_session', isv, { body });
    const b = await overGraph('create_connect_session', isv, { body });
    const shape = (x: Answer) => ('ok' in x ? drop(x.ok, ['id', 'connect_url', 'expires_at']) : x);
    expect(shape(b)).toEqual(shape(a));
    const [idA, idB] = [(a as { ok: { id: string } }).ok.id, (b as { ok: { id: string } }).ok.id];
    await expectParity('get_connect_session', isv, { path: { session_id: idA } });
    await expectSettledParity('list_connect_sessions', isv, {});
    const restCancel = await overRest('cancel_connect_session', isv, { path: { session_id: idA } });
    const graphCancel = await overGraph('cancel_connect_session', isv, { path: { session_id: idB } });
    const cancelled = (x: Answer) => ('ok' in x ? drop(x.ok, ['id', 'created_at', 'updated_at', 'expires_at']) : x);
    expect(cancelled(graphCancel)).toEqual(cancelled(restCancel));
    await expectParity('cancel_connect_session', isv, { path: { session_id: idA } });
    expect((await expectParity('create_connect_session', isv, { body: { tenant_id: '00000000-0000-0000-0000-000000000000', kinds: ['psa'], requested_grants: [] } })).status).toBe(404);
    for (const n of ['create_connect_session', 'get_connect_session', 'list_connect_sessions', 'cancel_connect_session']) covered.add(n);
  });

  it('companies and contacts', async () => {
    await expectParity('create_company', isv, { path: T(), body: { name: 'Contoso Ltd' } });
    expect((await expectParity('create_company', isv, { path: T(), body: { name: 'Lakeshore Family Dental' } })).status).toBe(409);
    const k = key();
    await expectParity('create_company', isv, { path: T(), body: { name: 'Litware Inc', external_id: 'parity-ext', dry_run: false, idempotency_key: k } });
    await expectParity('match_contacts', isv, { path: T(), body: { name: 'Megan Bowen', company_name: 'Contoso Ltd' } });
    covered.add('create_company');
    covered.add('match_contacts');
  });

  it('identity: book, mappings, leftovers and decisions', async () => {
    await expectParity('put_identity_book', isv, { path: T(), body: { customers: [{ ref: 'parity-1', name: 'Tailspin Toys' }, { ref: 'parity-2', name: 'Parity Nowhere' }, { ref: 'parity-3', name: 'Parity Gone' }] } });
    await expectParity('identity_book', isv, { path: T() });
    await expectParity('identity_mappings', isv, { path: T() });
    await expectParity('identity_unmapped', isv, { path: T() });
    await expectParity('identity_candidates', isv, { path: T(), query: { customer_ref: 'parity-2', q: 'parity', limit: 3 } });
    await expectParity('identity_candidates', isv, { path: T(), query: { q: 'tailspin' } });
    const tailspin = (await overRest('identity_mappings', isv, { path: T() }) as { ok: { mappings: any[] } }).ok.mappings.find((m) => m.customer_ref === 'parity-1');
    // Matching a pair that is matched already answers the match: the same on both surfaces.
    await expectParity('identity_match', isv, { path: T(), body: { customer_ref: 'parity-1', company_source_id: tailspin.company_source_id } });
    await expectParity('identity_skip', isv, { path: T(), body: { customer_ref: 'parity-2' } });
    const [restUnset, graphUnset] = [await overRest('identity_unset', isv, { path: T(), body: { customer_ref: 'parity-2' } }), await overGraph('identity_unset', isv, { path: T(), body: { customer_ref: 'parity-2' } })];
    expect([restUnset, graphUnset].map((a) => ('ok' in a ? (a.ok as any).action : a))).toEqual(['unset', 'unset']);
    expect((await expectParity('identity_import', isv, { path: T(), body: { all_unmatched: true } })).status).toBe(501);
    const [restEndpoint, graphEndpoint] = [
      await overRest('put_import_endpoint', isv, { path: T(), body: { url: 'http://127.0.0.1:9/import' } }),
      await overGraph('put_import_endpoint', isv, { path: T(), body: { url: 'http://127.0.0.1:9/import' } }),
    ];
    expect([restEndpoint, graphEndpoint].map((a) => ('ok' in a ? drop(a.ok, ['secret', 'created_at']) : a))).toEqual([{ url: 'http://127.0.0.1:9/import' }, { url: 'http://127.0.0.1:9/import' }]);
    await expectParity('identity_import', isv, { path: T(), body: { all_unmatched: true } });
    const restDelete = await overRest('delete_identity_customer', isv, { path: { ...T(), ref: 'parity-3' } });
    const graphDelete = await overGraph('delete_identity_customer', isv, { path: { ...T(), ref: 'parity-2' } });
    expect([restDelete, graphDelete].map((a) => ('ok' in a ? (a.ok as any).removed : a))).toEqual([true, true]);
    await expectParity('delete_identity_customer', isv, { path: { ...T(), ref: 'parity-3' } });
    for (const n of ['put_identity_book', 'identity_book', 'identity_mappings', 'identity_unmapped', 'identity_candidates', 'identity_match', 'identity_skip', 'identity_unset', 'identity_import', 'put_import_endpoint', 'delete_identity_customer']) covered.add(n);
  });

  it('sync and sandbox reset run on both surfaces with the same answer shape', async () => {
    for (const [name, input] of [['sync_tenant', { path: { tenant_id: svc.betaId }, body: {} }], ['reset_sandbox', { body: { tenant_id: svc.betaId } }]] as const) {
      const rest = await overRest(name, isv, input);
      const graph = await overGraph(name, isv, input);
      // Each run is a sync of its own: its id differs, its shape does not.
      const counts = (x: Answer) => JSON.parse(JSON.stringify((x as { ok: unknown }).ok).replace(/"(fetched|created|updated|unchanged)":\d+/g, '"$1":0').replace(/"mode":"\w+"/g, '"mode":"-"').replace(/"sync_id":"[^"]*"/g, '"sync_id":"-"'));
      expect(normal(counts(graph))).toEqual(normal(counts(rest)));
      covered.add(name);
      if (name === 'sync_tenant') {
        // The poll of a finished sync answers the same on both surfaces.
        const syncId = (rest as { ok: { sync_id: string } }).ok.sync_id;
        await expectParity('tenant_sync', isv, { path: { tenant_id: svc.betaId, sync_id: syncId } });
        covered.add('tenant_sync');
      }
    }
  }, 120_000);

  it('sandbox simulate: the same events for the same change, the same refusal', async () => {
    const note = (target_id: string) => ({ body: { tenant_id: svc.alphaId, change: { kind: 'ticket_note', target_id } } });
    // Absorb what earlier cases wrote at the vendor, so both surfaces see only this change.
    await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    const rest = await overRest('simulate_sandbox_change', isv, note('30110'));
    const graph = await overGraph('simulate_sandbox_change', isv, note('30111'));
    const shape = (x: Answer) => (x as { ok: { events: { kind: string }[]; tenant_id: string } }).ok;
    expect(shape(rest).events.map((e) => e.kind)).toEqual(['ticket.noted']);
    expect(shape(graph).events.map((e) => e.kind)).toEqual(shape(rest).events.map((e) => e.kind));
    expect(shape(graph).tenant_id).toBe(shape(rest).tenant_id);
    const refuse = { body: { tenant_id: svc.alphaId, change: { kind: 'ticket_reopen', target_id: '30110' } } };
    const restError = await overRest('simulate_sandbox_change', isv, refuse);
    expect(restError.status).toBe(422);
    expect(await overGraph('simulate_sandbox_change', isv, refuse)).toEqual({ error: (restError as { error: string }).error });
    covered.add('simulate_sandbox_change');
  }, 120_000);

  it('request log: a page of it, and one request with its bodies', async () => {
    await svc.api(`/tenants/${svc.alphaId}/status`);
    await svc.services.requestRecorder.flush();
    const query = { route: '/tenants/{tenant_id}/status', limit: 5 };
    await expectSettledParity('list_requests', isv, { query });
    const first = (await overRest('list_requests', isv, { query }) as { ok: { requests: { id: string }[] } }).ok.requests[0];
    await expectParity('get_request', isv, { path: { request_id: first.id } });
    expect((await expectParity('get_request', isv, { path: { request_id: 'no-such-request' } })).status).toBe(404);
    expect((await expectParity('list_requests', msp, {})).status).toBe(403);
    for (const n of ['list_requests', 'get_request']) covered.add(n);
  });

  it('every operation of the API has a parity case', () => {
    const operations = allOperations().filter((o) => o.http && o.graph !== false).map((o) => o.name).sort();
    expect([...covered].sort()).toEqual(operations);
  });
});

describe('MCP answers what REST answers', () => {
  const tool = async (name: string, args: Record<string, unknown>) => (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  const text = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

  it('the three list tools', async () => {
    for (const [name, list] of [['list_tickets', 'tickets'], ['list_devices', 'devices'], ['list_installed_applications', 'applications']]) {
      const rest = await svc.api(`/tenants/${svc.alphaId}/${list}?limit=4`);
      const r = await tool(name, { tenant_id: svc.alphaId, limit: 4, view: 'full' });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual(rest.body);
      expect(text(r)).toEqual(rest.body);
      // The MCP default (view summary) is the same page without the vendor payload.
      const summary = await tool(name, { tenant_id: svc.alphaId, limit: 4 });
      expect(summary.structuredContent).toEqual({ ...rest.body, [list]: rest.body[list].map(({ raw: _r, vendor: _v, ...canonical }: Record<string, unknown>) => canonical) });
    }
  });

  it('route_finding, and its refusals', async () => {
    const finding = { kind: 'organizational', title: 'MCP parity', severity: 'low', company_name: 'Contoso Ltd', idempotency_key: key() };
    const rest = await svc.api(`/tenants/${svc.alphaId}/findings/route`, { method: 'POST', json: finding });
    // The same envelope; the request id is an HTTP request's own (an MCP tool call is not one).
    const { request_id: _requestId, ...restBody } = rest.body;
    expect(text(await tool('route_finding', { tenant_id: svc.alphaId, ...finding }))).toEqual(restBody);
    const hidden = await tool('list_tickets', { tenant_id: '00000000-0000-0000-0000-000000000000' });
    expect(hidden.isError).toBe(true);
    expect(text(hidden).code).toBe('not_found');
  });
});
