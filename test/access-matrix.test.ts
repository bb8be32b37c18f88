/**
 * The access matrix (docs/architecture.md, Tenancy, keys and grants): every operation of allOperations()
 * by every kind of caller, on REST, GraphQL and MCP, answers exactly what its declaration says: no or a
 * revoked key 401; a caller that cannot see the tenant 404 `not_found` (the tenant's own message); a
 * caller of the wrong kind 403 `role_required`; an ISV without the declared grant 403 `grant_missing`;
 * anyone else gets past access (whatever the operation then answers). The expectation is computed from
 * the declaration (role, grant), so an operation added later is in the matrix, and an ISV write without
 * a declared grant fails here. Requests are the sandbox examples, previews (dry_run) for writes; where a
 * write has no preview, the caller that may call it sends a body the request schema refuses (422), so
 * nothing is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType, isUnionType, type GraphQLInputType } from 'graphql';
import { grantKeysFor, staticNeed, type GrantNeed } from '../src/access/access.service';
import { Grant, GRANT_KEYS, type GrantKey } from '../src/access/caller';
import { allOperations } from '../src/features';
import { domainSchema } from '../src/graphql/schema';
import type { Operation } from '../src/operations/operation';
import { sandboxExampleIds } from '../src/rest/example-ids';
import { operationExamples, type OperationExample } from '../src/rest/examples';
import { startTestService, type TestService } from './support/service';

type Outcome = 'unauthenticated' | 'tenant_not_found' | 'role_required' | 'grant_missing' | 'allowed';
interface MatrixCaller {
  name: string;
  /** X-API-Key (REST, MCP, GraphQL), or the admin token (GraphQL only). */
  key: string | null;
  admin?: boolean;
  kind: 'isv' | 'msp' | 'admin' | 'none';
  /** Sees alpha (the tenant every request names). */
  seesAlpha: boolean;
  /** The grant keys an ISV holds on alpha, by connection kind. */
  held?: Partial<Record<string, GrantKey[]>>;
}

/** Grants the ISV without the grants holds: one event key, so that it sees alpha. */
const WITHOUT_HELD: GrantKey[] = [Grant.CompanyEvents];
/** The operations whose grant depends on the input: none of their needs is the key the ISV without holds. */
const INPUT_DEPENDENT = ['route_finding', 'create_company'];
const RANDOM_ID = '00000000-0000-4000-8000-00000000abcd';

let svc: TestService;
let callers: MatrixCaller[];
let examples: Record<string, OperationExample>;

beforeAll(async () => {
  svc = await startTestService({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'false' } });
  examples = operationExamples(await sandboxExampleIds(svc.services.ds));
  const conns = (await svc.api(`/tenants/${svc.alphaId}/connections`)).body.connections as { id: string; kind: string }[];
  const isv = async (name: string) => {
    const id = (await svc.graphql('mutation($n: String!) { create_isv(name: $n) { id } }', { n: name })).data.create_isv.id as string;
    const issued = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "matrix") { id key } }', { id })).data.issue_api_key;
    return { id, key: issued.key as string, keyId: issued.id as string };
  };
  const grant = (isvId: string, connectionId: string, keys: string[]) =>
    svc.graphql('mutation($isv: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $isv, connection_id: $c, keys: $k) { id } }', { isv: isvId, c: connectionId, k: keys });

  // The sandbox ISV holds every key each connection of alpha is offered (nothing withheld there): it is the ISV with the grants.
  const granted = await svc.services.access.tenantAccess(await svc.services.access.authenticate(svc.key), svc.alphaId);
  expect(conns.every((c) => grantKeysFor(c.kind as 'psa').every((k) => granted.grants.get(c.id)?.has(k)))).toBe(true);

  const without = await isv('Matrix ISV without grants');
  const psa = conns.find((c) => c.kind === 'psa')!;
  await grant(without.id, psa.id, WITHOUT_HELD);

  // Another ISV with a grant on a tenant of its own (a real, working key that cannot see alpha), and a revoked key.
  const other = await isv('Matrix other ISV');
  const tenant = (await svc.graphql('mutation { create_tenant(name: "Matrix other MSP", slug: "matrix-other") { id } }')).data.create_tenant.id;
  const conn = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
    input: { tenant_id: tenant, kind: 'psa', connector: 'connectwise', base_url: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
      credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' } },
  });
  await grant(other.id, conn.data.create_connection.id, [Grant.TicketCreate]);
  const revoked = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "revoked") { id key } }', { id: other.id })).data.issue_api_key;
  await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id: revoked.id });

  callers = [
    { name: 'ISV with the grants', key: svc.key, kind: 'isv', seesAlpha: true, held: { psa: grantKeysFor('psa'), rmm: grantKeysFor('rmm'), distributor: grantKeysFor('distributor') } },
    { name: 'ISV without the grants', key: without.key, kind: 'isv', seesAlpha: true, held: { psa: WITHOUT_HELD } },
    { name: "alpha's MSP key", key: svc.alphaMspKey, kind: 'msp', seesAlpha: true },
    { name: "another tenant's MSP key", key: svc.betaMspKey, kind: 'msp', seesAlpha: false },
    { name: "another tenant's ISV key", key: other.key, kind: 'isv', seesAlpha: false },
    { name: 'a revoked key', key: revoked.key, kind: 'none', seesAlpha: false },
    { name: 'no key', key: null, kind: 'none', seesAlpha: false },
    { name: 'the admin token', key: svc.config.adminToken, admin: true, kind: 'admin', seesAlpha: true },
  ];
}, 180_000);
afterAll(async () => { await svc?.close(); });

/** Where the operation names its tenant: the path (visibility before the role) or the body (the handler asks, after the role). */
function tenantIn(op: Operation): 'path' | 'body' | null {
  if ((op.path as { shape?: Record<string, unknown> } | undefined)?.shape?.tenant_id) return 'path';
  if ((op.body as { shape?: Record<string, unknown> } | undefined)?.shape?.tenant_id) return 'body';
  return null;
}

/** The admin token (internal support) may run every query, whatever its role; never a mutation of another role. */
function adminMayRun(op: Operation, c: MatrixCaller): boolean {
  return c.kind === 'admin' && op.kind === 'query';
}

/** What the declaration says this caller gets. */
function expected(op: Operation, c: MatrixCaller): Outcome {
  if (c.kind === 'none') return 'unauthenticated';
  if (tenantIn(op) === 'path' && !c.seesAlpha) return 'tenant_not_found';
  if (op.role !== 'reader' && op.role !== c.kind && !adminMayRun(op, c)) return 'role_required';
  if (tenantIn(op) === 'body' && !c.seesAlpha) return 'tenant_not_found';
  if (c.kind !== 'isv' || op.grant === undefined || op.grant === 'none') return 'allowed';
  if (typeof op.grant === 'function') return grantFor(c, null);
  return grantFor(c, staticNeed(op.grant)!);
}

/** Whether the ISV holds a need (null: a rule of the input, which only the ISV holding every key is sure to meet). */
function grantFor(c: MatrixCaller, need: GrantNeed | null): Outcome {
  if (!need) return c.held?.psa?.length === grantKeysFor('psa').length ? 'allowed' : 'grant_missing';
  const keys = typeof need.key === 'string' ? [need.key] : [...need.key];
  const kinds = need.kind ? [need.kind] : keys.length === 1 && ['psa', 'rmm', 'distributor'].includes(keys[0].split('.')[0]) ? [keys[0].split('.')[0]] : ['psa', 'rmm', 'distributor'];
  return kinds.some((k) => keys.some((key) => c.held?.[k]?.includes(key))) ? 'allowed' : 'grant_missing';
}

/** A write with no preview, sent by a caller that gets past access: a body the schema refuses, so nothing is written. */
function writesWithoutPreview(op: Operation, body: unknown): boolean {
  return op.kind === 'mutation' && !(body && typeof body === 'object' && (body as { dry_run?: unknown }).dry_run === true);
}

interface Input { path: Record<string, string>; query: Record<string, unknown>; body: Record<string, unknown> | undefined }

/**
 * The example's input. Over REST and MCP a write without a preview gets, from a caller past access, a
 * property the request schema refuses (422: nothing written). GraphQL refuses such a property before the
 * resolver runs, so there the write runs as the sandbox example (our store and the simulators only), with
 * reset_sandbox last.
 */
function inputOf(op: Operation, outcome: Outcome, surface: string): Input {
  const ex = examples[op.name] ?? {};
  const path: Record<string, string> = {};
  for (const k of Object.keys((op.path as { shape?: Record<string, unknown> } | undefined)?.shape ?? {})) path[k] = k === 'tenant_id' ? svc.alphaId : ex.path?.[k] ?? RANDOM_ID;
  let body = op.body ? { ...((ex.body as Record<string, unknown> | undefined) ?? {}) } : undefined;
  if (body && 'tenant_id' in body) body.tenant_id = svc.alphaId;
  if (body && outcome === 'allowed' && surface !== 'GraphQL' && writesWithoutPreview(op, body)) body = { ...body, access_matrix_probe: true };
  return { path, query: { ...(ex.query ?? {}) }, body };
}

function classify(status: number, code: unknown, message: unknown): Outcome | `status ${number}` {
  if (status === 401 || code === 'unauthenticated') return 'unauthenticated';
  if (code === 'role_required') return 'role_required';
  if (code === 'grant_missing') return 'grant_missing';
  if (code === 'not_found' && message === 'Tenant not found.') return 'tenant_not_found';
  if (status >= 500 && status !== 501 && status !== 502 && status !== 503) return `status ${status}`;
  return 'allowed';
}

function authHeaders(c: MatrixCaller): Record<string, string> {
  if (!c.key) return {};
  return c.admin ? { authorization: `Bearer ${c.key}` } : { 'x-api-key': c.key };
}

async function overRest(op: Operation, c: MatrixCaller, input: Input): Promise<string> {
  let url = op.http!.path;
  for (const [k, v] of Object.entries(input.path)) url = url.replace(`{${k}}`, encodeURIComponent(v));
  const qs = new URLSearchParams(Object.entries(input.query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await fetch(`${svc.url}${url}${qs ? `?${qs}` : ''}`, {
    method: op.http!.method.toUpperCase(),
    headers: { ...authHeaders(c), ...(input.body ? { 'content-type': 'application/json' } : {}) },
    body: input.body ? JSON.stringify(input.body) : undefined,
  });
  const text = await res.text();
  const json = (() => { try { return JSON.parse(text); } catch { return {}; } })();
  return classify(res.status, json.code, json.message);
}

/** A value GraphQL accepts for a required argument of an operation without an example (the admin fields). */
function sampleArg(type: GraphQLInputType, name: string): unknown {
  if (isNonNullType(type)) return sampleArg(type.ofType, name);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0].value;
  if (isInputObjectType(type)) {
    return Object.fromEntries(Object.values(type.getFields()).filter((f) => isNonNullType(f.type)).map((f) => [f.name, sampleArg(f.type, f.name)]));
  }
  if (isScalarType(type)) {
    if (type.name === 'Int' || type.name === 'Float') return 1;
    if (type.name === 'Boolean') return false;
    if (type.name === 'JSON' || type.name === 'JSONObject') return {};
  }
  return name === 'tenant_id' ? svc.alphaId : RANDOM_ID;
}

async function overGraph(op: Operation, c: MatrixCaller, input: Input): Promise<string> {
  const schema = domainSchema(allOperations());
  const root = op.kind === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const field = root.getFields()[op.name];
  const values: Record<string, unknown> = { ...input.path, ...input.query, ...(op.flattenBody ? input.body : {}) };
  if (op.body && !op.flattenBody && examples[op.name]) values.input = input.body ?? {};
  // The admin fields have no example: values of their types that name nothing (never alpha, except as a tenant_id).
  if (!examples[op.name]) for (const a of field.args) if (isNonNullType(a.type) && !(a.name in values)) values[a.name] = sampleArg(a.type, a.name);
  const args = field.args.filter((a) => a.name in values);
  const vars = args.map((a) => `$${a.name}: ${a.type}`).join(', ');
  const named = getNamedType(field.type);
  const selection = isObjectType(named) || isUnionType(named) ? '{ __typename }' : '';
  const query = `${op.kind === 'query' ? 'query' : 'mutation'} ${vars ? `(${vars})` : ''} { r: ${op.name}${args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : ''} ${selection} }`;
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(c) },
    body: JSON.stringify({ query, variables: Object.fromEntries(args.map((a) => [a.name, values[a.name]])) }),
  });
  const json = await res.json() as { code?: string; message?: string; errors?: { message: string; extensions?: { code?: string } }[] };
  if (res.status === 401) return classify(401, json.code, json.message);
  const e = json.errors?.[0];
  if (e && (e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' || e.extensions?.code === 'BAD_USER_INPUT')) return `graphql input: ${e.message}`;
  return classify(res.status, e?.extensions?.code, e?.message);
}

async function overMcp(op: Operation, c: MatrixCaller, input: Input): Promise<string> {
  const args = { ...input.path, ...Object.fromEntries(Object.entries(input.query).filter(([k]) => !op.mcp!.omit?.includes(k))), ...(input.body ?? {}) };
  const res = await fetch(`${svc.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...authHeaders(c) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: op.mcp!.tool, arguments: args } }),
  });
  const json = await res.json() as { code?: string; message?: string; result?: { isError?: boolean; content: { text: string }[] }; error?: { code: number; message: string } };
  if (res.status !== 200) return classify(res.status, json.code, json.message);
  if (json.error) return `json-rpc ${json.error.code}`;
  if (!json.result?.isError) return 'allowed';
  const envelope = JSON.parse(json.result.content[0].text) as { code: string; message: string; status: number };
  return classify(envelope.status, envelope.code, envelope.message);
}

describe('the declaration', () => {
  it('every write an ISV may call declares its grant (a key, a rule of the target, or none said explicitly)', () => {
    const undeclared = allOperations().filter((op) => op.kind === 'mutation' && (op.role === 'isv' || op.role === 'reader') && op.grant === undefined).map((op) => op.name);
    expect(undeclared).toEqual([]);
  });

  it('outside src/access no code spells a grant key or branches on a caller\'s kind (it asks src/access)', () => {
    const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
    const root = path.join(__dirname, '..');
    // A key as a string in code (quoted); documentation names keys in backticks and stays.
    const literal = new RegExp(`['"](${GRANT_KEYS.map((k) => k.replace(/\./g, '\\.')).join('|')})['"]`);
    const kindBranch = /caller\??\.kind\b|kind === '(isv|msp|admin)'|kind !== '(isv|msp|admin)'/;
    const found: string[] = [];
    for (const file of [...files(path.join(root, 'src')), ...files(path.join(root, 'jobs'))]) {
      if (file.includes(`${path.sep}src${path.sep}access${path.sep}`)) continue;
      fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        if (literal.test(line) || kindBranch.test(line)) found.push(`${path.relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('the rules that depend on the input are the ones this matrix knows', () => {
    expect(allOperations().filter((op) => typeof op.grant === 'function').map((op) => op.name).sort()).toEqual([...INPUT_DEPENDENT].sort());
  });
});

describe.each(['REST', 'MCP', 'GraphQL'] as const)('%s', (surface) => {
  it('every operation by every kind of caller answers what its declaration says', async () => {
    const mismatches: string[] = [];
    const seen = new Set<Outcome>();
    let cells = 0;
    const last = (op: Operation) => (op.name === 'reset_sandbox' ? 1 : 0);
    for (const op of [...allOperations()].sort((a, b) => last(a) - last(b))) {
      if (surface === 'REST' && !op.http) continue;
      if (surface === 'GraphQL' && op.graph === false) continue;
      if (surface === 'MCP' && !op.mcp) continue;
      for (const c of callers) {
        if (c.admin && surface !== 'GraphQL') continue;
        const want = expected(op, c);
        const input = inputOf(op, want, surface);
        const got = surface === 'REST' ? await overRest(op, c, input) : surface === 'GraphQL' ? await overGraph(op, c, input) : await overMcp(op, c, input);
        cells++;
        seen.add(want);
        // An admin field given an id that names nothing: the admin sees every tenant, so this 404 is the record's.
        const adminRecord = c.admin && !examples[op.name] && got === 'tenant_not_found';
        if (got !== want && !(want === 'allowed' && adminRecord)) mismatches.push(`${op.name} as ${c.name}: expected ${want}, got ${got}`);
      }
    }
    expect(mismatches).toEqual([]);
    // The matrix really exercised every kind of answer.
    expect([...seen].sort()).toEqual(['allowed', 'grant_missing', 'role_required', 'tenant_not_found', 'unauthenticated']);
    expect(cells).toBeGreaterThan(surface === 'MCP' ? 20 : 400);
  }, 600_000);
});

describe('the webhook removal', () => {
  it("the tenant's MSP key cannot remove an ISV's webhook (role isv, as for registering it); the ISV can", async () => {
    const reg = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: 'https://receiver.example.com/matrix' } });
    expect(reg.status).toBe(201);
    const del = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook/${reg.body.id}`, { method: 'DELETE', key: svc.alphaMspKey });
    expect(del.status).toBe(403);
    expect(del.body).toMatchObject({ code: 'role_required', details: { role: 'isv' } });
    const listed = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { key: svc.alphaMspKey });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain(reg.body.id);
    const own = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook/${reg.body.id}`, { method: 'DELETE' });
    expect(own.status).toBe(204);
  });
});

describe('the admin token reads what a customer sees (docs/architecture.md, Tenancy, keys and grants)', () => {
  it('states the rule: admin may run every query, and no mutation that is not its own', () => {
    const queries = allOperations().filter((op) => op.kind === 'query');
    expect(queries.every((op) => expected(op, callers.find((c) => c.admin)!) !== 'role_required')).toBe(true);
    const foreignWrites = allOperations().filter((op) => op.kind === 'mutation' && op.role !== 'admin' && op.role !== 'reader');
    expect(foreignWrites.length).toBeGreaterThan(0);
    expect(foreignWrites.every((op) => expected(op, callers.find((c) => c.admin)!) === 'role_required')).toBe(true);
  });

  it('reads charges, grants, reconciliation, identity book and routing of a sandbox tenant in the graph, audited as admin.read; writes stay 403', async () => {
    const isvId = (await svc.services.access.authenticate(svc.key) as { isvId: string }).isvId;
    const t = svc.alphaId;
    const q = await svc.graphql(`query($t: ID!, $isv: ID!) {
      list_charges(tenant_id: $t) { __typename ... on ChargeList { charges { id } } }
      list_grants(tenant_id: $t) { grants { isv_id connection_id keys } }
      billing_reconciliation(tenant_id: $t, period_start: "2026-11-01", period_end: "2026-11-30") { reconciliation { company { name } } totals { __typename } }
      identity_book(tenant_id: $t, isv_id: $isv) { book { ref name } }
      routing(tenant_id: $t, isv_id: $isv) { effective { technical organizational } }
    }`, { t, isv: isvId });
    expect(q.errors).toBeUndefined();
    // The same as the customer's own keys see over REST.
    const msp = { key: svc.alphaMspKey };
    const charges = await svc.api(`/tenants/${t}/charges?limit=500`, msp);
    expect(q.data.list_charges.__typename).toBe('ChargeList');
    expect(q.data.list_charges.charges.map((c: { id: string }) => c.id)).toEqual(charges.body.charges.slice(0, 100).map((c: { id: string }) => c.id));
    const grants = await svc.api(`/tenants/${t}/grants`, msp);
    expect(q.data.list_grants.grants.length).toBe(grants.body.grants.length);
    const rec = await svc.api(`/tenants/${t}/billing/reconciliation?period_start=2026-11-01&period_end=2026-11-30`, msp);
    expect(q.data.billing_reconciliation.reconciliation.length).toBe(rec.body.reconciliation.length);
    const book = await svc.api(`/tenants/${t}/identity/book`);
    expect(q.data.identity_book.book.length).toBeGreaterThan(0);
    expect(q.data.identity_book.book.map((c: { ref: string }) => c.ref)).toEqual(book.body.book.map((c: { ref: string }) => c.ref));
    const routing = await svc.api(`/tenants/${t}/routing`);
    expect(q.data.routing.effective).toEqual(routing.body.effective);

    // The MSP sees that support looked.
    const audit = await svc.api(`/tenants/${t}/audit?limit=500`, msp);
    const looked = audit.body.audit.filter((e: { action: string }) => e.action === 'admin.read').map((e: { subject_ref: string }) => e.subject_ref);
    expect(looked).toEqual(expect.arrayContaining(['list_charges', 'list_grants', 'billing_reconciliation', 'identity_book', 'routing']));

    // Without naming the ISV, the admin is told which argument is missing; a write is still the customer's.
    const unnamed = await svc.graphql('query($t: ID!) { routing(tenant_id: $t) { supported_targets } }', { t });
    expect(unnamed.errors?.[0]?.extensions?.code).toBe('request_invalid');
    const write = await svc.graphql('mutation($t: ID!) { set_routing(tenant_id: $t, input: { overrides: { technical: null } }) { supported_targets } }', { t });
    expect(write.errors?.[0]?.extensions?.code).toBe('role_required');
  });
});
