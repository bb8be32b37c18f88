/**
 * The interface description: the checked-in SDL and OpenAPI match what the code emits, the OpenAPI
 * document is valid OpenAPI 3.1 with version 0.77.0, it covers every path of the interface document,
 * and every path it lists is served (none answers "no such route").
 */
import fs from 'node:fs';
import path from 'node:path';
import { getNamedType, isInputObjectType, isObjectType } from 'graphql';
import { allOperations } from '../src/features';
import { domainSchema } from '../src/graphql/schema';
import { GraphTypeFactory } from '../src/graphql/zod-graphql';
import { z } from '../src/shared/request';
import { emittedSchemas } from '../src/tools/emit-schema';
import { ERROR_CODES } from '../src/errors/error-codes';
import { startTestService, type TestService } from './support/service';

const INTERFACE_PATHS = [
  'GET /tenants/{tenant_id}/tickets', 'POST /tenants/{tenant_id}/tickets', 'POST /tenants/{tenant_id}/tickets/write',
  'GET /tenants/{tenant_id}/agreements', 'GET /tenants/{tenant_id}/members', 'GET /tenants/{tenant_id}/ticket-boards',
  'GET /tenants/{tenant_id}/ticket-statuses', 'GET /tenants/{tenant_id}/ticket-priorities', 'GET /tenants/{tenant_id}/devices',
  'GET /tenants/{tenant_id}/applications', 'GET /tenants/{tenant_id}/audit', 'GET /tenants/{tenant_id}/connections',
  'GET /tenants/{tenant_id}/connections/events', 'GET /tenants/{tenant_id}/identity/mappings',
  'GET /tenants/{tenant_id}/identity/unmapped', 'GET /tenants/{tenant_id}/incidents', 'GET /tenants/{tenant_id}/status',
  'GET /tenants/{tenant_id}/routing', 'PUT /tenants/{tenant_id}/routing', 'POST /tenants/{tenant_id}/companies',
  'POST /tenants/{tenant_id}/findings/route', 'POST /tenants/{tenant_id}/ticket-events/webhook', 'POST /sandbox/reset',
];

let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startTestService();
  doc = (await svc.api('/openapi.json', { key: null })).body;
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('checked-in schemas', () => {
  it.each(['schema.graphql', 'openapi.json'] as const)('schema/%s matches what the code emits (run `npm run schema:emit`)', (file) => {
    const onDisk = fs.readFileSync(path.join(__dirname, '..', 'schema', file), 'utf8');
    expect(onDisk).toBe(emittedSchemas()[file]);
  });
});

describe('the typed graph', () => {
  /** Vendor payloads (records' raw and vendor.native, vendor_native in, a preview's request body) and free-form detail. */
  const PAYLOAD_FIELDS = ['raw', 'native', 'vendor_native', 'detail', 'body'];

  it('has no JSONObject or JSON argument or result apart from the vendor payload fields', () => {
    const opaque: string[] = [];
    const isJson = (t: import('graphql').GraphQLType) => ['JSONObject', 'JSON'].includes(getNamedType(t)!.name);
    for (const type of Object.values(domainSchema(allOperations()).getTypeMap())) {
      if (type.name.startsWith('__') || !(isObjectType(type) || isInputObjectType(type))) continue;
      for (const field of Object.values(type.getFields())) {
        if (isJson(field.type) && !PAYLOAD_FIELDS.includes(field.name)) opaque.push(`${type.name}.${field.name}`);
        for (const arg of ('args' in field ? field.args : []) ?? []) if (isJson(arg.type)) opaque.push(`${type.name}.${field.name}(${arg.name})`);
      }
    }
    expect(opaque).toEqual([]);
  });

  it('has no field that returns JSON as a string', () => {
    const sdl = emittedSchemas()['schema.graphql'];
    expect(sdl).not.toMatch(/_json\b/i);
    expect(sdl).not.toContain('list_page_json');
  });

  it('refuses to build a field that would need opaque JSON', () => {
    const bad = z.object({ settings: z.record(z.string(), z.unknown()) }).openapi('Bad');
    expect(() => new GraphTypeFactory().objectType(bad, 'Bad')).toThrow(/opaque JSON is allowed only for vendor payload fields/);
  });

  it('every write answers a typed union of its preview and its commit', () => {
    const mutation = domainSchema(allOperations()).getMutationType()!.getFields();
    for (const name of ['create_ticket', 'write_ticket', 'create_time_entry', 'route_finding']) {
      const t = getNamedType(mutation[name].type);
      expect({ name, kind: t.constructor.name }).toEqual({ name, kind: 'GraphQLUnionType' });
    }
  });
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with version 0.77.0', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.77.0');
    // ESM-only package: loaded with a dynamic import.
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every path of the interface document', () => {
    const listed = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    for (const p of INTERFACE_PATHS) expect(listed).toContain(p);
  });

  it('every listed operation is served: none answers 404 "no route"', async () => {
    for (const [p, ops] of Object.entries(doc.paths) as [string, any][]) {
      for (const method of Object.keys(ops)) {
        const url = p.replace('{tenant_id}', svc.betaId);
        const res = await svc.api(url, { method: method.toUpperCase(), ...(method === 'get' ? {} : { json: {} }) });
        expect({ route: `${method} ${p}`, noRoute: res.status === 404 && /^No route/.test(res.body?.message ?? '') })
          .toEqual({ route: `${method} ${p}`, noRoute: false });
        expect({ route: `${method} ${p}`, serverError: res.status >= 500 && res.status !== 501 }).toEqual({ route: `${method} ${p}`, serverError: false });
      }
    }
  });

  it('a write documents its preview (200) and its commit (201) with exact schemas, not free-form objects', () => {
    const create = doc.paths['/tenants/{tenant_id}/tickets'].post.responses;
    expect(create['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/TicketCreatePreview');
    expect(create['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/TicketCreateResult');
    const result = doc.components.schemas.TicketCreateResult;
    expect(result.additionalProperties).toBe(false);
    expect(result.properties.ticket_ref).toBeDefined();
    expect(result.properties.dry_run).toMatchObject({ enum: [false] });
    expect(doc.components.schemas.WriteResult).toBeUndefined();
  });

  it('records reject undeclared properties (additionalProperties false)', () => {
    expect(doc.components.schemas.Ticket.additionalProperties).toBe(false);
    expect(doc.components.schemas.DeviceList.required).toEqual(expect.arrayContaining(['devices', 'sandbox']));
  });
});

describe('docs', () => {
  it('/docs renders from local assets', async () => {
    const page = await fetch(`${svc.url}/docs`);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const asset = await fetch(`${svc.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(100_000);
  });

  it('/docs/errors lists every error code as an anchor that doc_url points at', async () => {
    const html = await (await fetch(`${svc.url}/docs/errors`)).text();
    for (const code of Object.keys(ERROR_CODES)) expect(html).toContain(`id="${code}"`);
    const err = await svc.api('/tenants', { key: null });
    const anchor = new URL(err.body.doc_url).hash.slice(1);
    expect(html).toContain(`id="${anchor}"`);
  });

  it('an unknown path answers the Error envelope with 404', async () => {
    const res = await svc.api('/nope');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('/healthz, /readyz and /metrics answer', async () => {
    expect((await svc.api('/healthz', { key: null })).body).toEqual({ status: 'ok' });
    expect((await svc.api('/readyz', { key: null })).body).toMatchObject({ status: 'ready', database: true, queue: true });
    const metrics = await fetch(`${svc.url}/metrics`);
    expect(await metrics.text()).toContain('http_requests_total');
  });
});
