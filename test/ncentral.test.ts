/**
 * N-able N-central end to end, on sandbox-gamma's N-central connection: devices with attention and
 * patch state, customers as companies, installed software and active issues over REST, MCP and GraphQL,
 * events after a simulated change and their webhook delivery, and device deploy answered 501
 * `not_supported` with the reason (N-central's REST API lists no repository to check a package against).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { NcentralSimulator } from '../src/simulators/ncentral/simulator';
import type { NcActiveIssue, NcCustomer, NcDevice, NcDeviceAssets } from '../src/simulators/ncentral/types';
import { startTestService, type TestService } from './support/service';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-deliveries';

let svc: TestService;
let nc: NcentralSimulator;
let mcp: Client;
let receiver: WebhookReceiver;
const GAMMA = 'sandbox-gamma';

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  nc = svc.services.simulators!.ncentral as NcentralSimulator;
  mcp = new Client({ name: 'ncentral', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.key } } }));
  receiver = await startWebhookReceiver();
}, 120_000);
afterAll(async () => {
  await mcp?.close().catch(() => undefined);
  await receiver?.close();
  await svc?.close();
});

const devicesOf = () => nc.list(GAMMA, 'devices') as NcDevice[];
const issuesOf = () => nc.list(GAMMA, 'active-issues') as NcActiveIssue[];
const assetsOf = () => nc.list(GAMMA, 'assets') as NcDeviceAssets[];

async function readAll(list: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await svc.api(`/tenants/${svc.gammaId}/${list}?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    out.push(...res.body[list]);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('list did not end');
}

/** The whole events feed of gamma. */
async function feed(): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await svc.api(`/tenants/${svc.gammaId}/connections/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...res.body.events);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('feed did not end');
}

/** What the fixtures say each device's canonical state is. */
function expectedState(d: NcDevice) {
  const mine = issuesOf().filter((i) => i.deviceId === d.deviceId);
  const inv = assetsOf().find((a) => a.deviceId === d.deviceId)!;
  return {
    online: !mine.some((i) => i.notificationState === 7),
    needs_attention: mine.length > 0,
    patches_pending: inv.scanPending ? 0 : inv.patches.filter((p) => p.installationresult !== 'Installed').length,
  };
}

describe('sandbox-gamma: N-central lists over REST, MCP and GraphQL', () => {
  it('devices carry attention (active issues), connectivity and patch state (asset inventory), and the vendor payload', async () => {
    const devices = (await readAll('devices')).filter((d) => d.source === 'ncentral');
    expect(devices).toHaveLength(devicesOf().length);
    for (const d of devicesOf()) {
      const row = devices.find((x) => x.source_id === String(d.deviceId));
      expect(row).toMatchObject({ hostname: d.longName, company_name: d.customerName, company_source_id: String(d.customerId), os: d.supportedOs, ...expectedState(d) });
      expect(row.raw).toEqual(d);
    }
    expect(devices.some((d) => d.needs_attention) && devices.some((d) => !d.needs_attention)).toBe(true);
    expect(devices.some((d) => d.patches_pending > 0) && devices.some((d) => !d.online)).toBe(true);
  });

  it('installed software and active issues are listed', async () => {
    const apps = (await readAll('applications')).filter((a) => a.source === 'ncentral');
    const expected = assetsOf().filter((a) => !a.scanPending).reduce((n, a) => n + a.applications.length, 0);
    expect(apps).toHaveLength(expected);
    expect(apps.some((a) => /#2$/.test(a.source_id))).toBe(true);
    const incidents = (await readAll('incidents')).filter((i) => i.source === 'ncentral');
    expect(incidents.map((i) => i.source_id).sort()).toEqual(issuesOf().map((i) => String(i.taskId)).sort());
  });

  it('a customer renamed in N-central: its devices carry the new name (an RMM\'s companies raise no company events, as a distributor\'s do not)', async () => {
    const c = (nc.list(GAMMA, 'customers') as NcCustomer[]).find((x) => x.customerName === 'Orchard Lane Accounting')!;
    nc.simulate!(GAMMA, { kind: 'company_renamed', target_id: String(c.customerId), name: 'Orchard Lane Partners' });
    expect((await svc.api(`/tenants/${svc.gammaId}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);
    const devices = (await readAll('devices')).filter((d) => d.company_source_id === String(c.customerId));
    expect(devices.length).toBeGreaterThan(0);
    expect(devices.every((d) => d.company_name === 'Orchard Lane Partners')).toBe(true);
  });

  it('MCP and GraphQL answer the device list REST answers', async () => {
    const rest = await svc.api(`/tenants/${svc.gammaId}/devices?limit=50`);
    const r = (await mcp.callTool({ name: 'list_devices', arguments: { tenant_id: svc.gammaId, limit: 50, view: 'full' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual(rest.body);
    const res = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key },
      body: JSON.stringify({ query: 'query ($t: ID!) { list_devices(tenant_id: $t, limit: 50) { devices { source source_id hostname online needs_attention patches_pending } } }', variables: { t: svc.gammaId } }),
    });
    const graph: any = await res.json();
    expect(graph.errors).toBeUndefined();
    expect(graph.data.list_devices.devices).toEqual(rest.body.devices.map((d: any) => ({
      source: d.source, source_id: d.source_id, hostname: d.hostname, online: d.online, needs_attention: d.needs_attention, patches_pending: d.patches_pending,
    })));
  });
});

describe('sandbox-gamma: events after a simulated change', () => {
  it('a device going offline gives device.updated and attention needed, delivered to the webhook', async () => {
    const hook = await svc.api(`/tenants/${svc.gammaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiver.url}/nc-hook` } });
    expect(hook.status).toBe(201);
    const target = devicesOf().find((d) => expectedState(d).online && !expectedState(d).needs_attention)!;
    const res = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.gammaId, change: { kind: 'device_offline', target_id: String(target.deviceId) } } });
    expect(res.status).toBe(200);
    expect(res.body.target_id).toBe(String(target.deviceId));
    const updated = res.body.events.filter((e: any) => e.kind === 'device.updated');
    expect(updated.map((e: any) => [e.vendor, e.vendor_id])).toEqual([['ncentral', String(target.deviceId)]]);
    expect(updated[0].summary).toBe(`Device ${target.longName} went offline`);
    expect(res.body.events.some((e: any) => e.kind === 'health' && e.type === 'attention_needed')).toBe(true);
    const eventId = updated[0].id;
    for (let i = 0; i < 200 && !receiver.received.some((r) => JSON.stringify(r.body).includes(eventId)); i++) await new Promise((r) => setTimeout(r, 50));
    const delivery = receiver.received.find((r) => JSON.stringify(r.body).includes(eventId));
    expect(delivery?.path).toBe('/nc-hook');
    expect(JSON.stringify(delivery!.body)).toContain('device.updated');
    const res2 = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key },
      body: JSON.stringify({ query: 'query ($t: ID!) { list_events(tenant_id: $t, kind: "device", limit: 500) { events { id kind } } }', variables: { t: svc.gammaId } }),
    });
    const graph: any = await res2.json();
    expect(graph.errors).toBeUndefined();
    expect(graph.data.list_events.events.find((e: any) => e.id === eventId)).toMatchObject({ kind: 'device.updated' });
  });

  it('an agent check-in alone is not a change', async () => {
    const d = devicesOf()[2];
    const before = (await feed()).length;
    nc.updateDevice(GAMMA, d.deviceId, { lastApplianceCheckinTime: '2026-11-20T12:00:00Z' });
    expect((await svc.api(`/tenants/${svc.gammaId}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);
    expect((await feed()).length).toBe(before);
  });
});

describe('sandbox-gamma: device deploy', () => {
  it('answers 501 not_supported saying why, over REST and GraphQL (MCP has no deploy tool)', async () => {
    const d = devicesOf()[1];
    const rest = await svc.api(`/tenants/${svc.gammaId}/devices/${d.deviceId}/deploy`, { method: 'POST', json: { package_name: 'Install 7-Zip' } });
    expect(rest.status).toBe(501);
    expect(rest.body.code).toBe('not_supported');
    expect(rest.body.message).toMatch(/POST \/api\/scheduled-tasks\/direct/);
    expect(rest.body.message).toMatch(/no listing of the Script\/Software Repository/);
    const res = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key },
      body: JSON.stringify({ query: 'mutation ($t: ID!, $d: ID!) { deploy_to_device(tenant_id: $t, device_id: $d, input: { package_name: "Install 7-Zip" }) { __typename } }', variables: { t: svc.gammaId, d: String(d.deviceId) } }),
    });
    const graph: any = await res.json();
    expect(graph.errors?.[0]?.extensions?.code ?? graph.errors?.[0]?.message).toMatch(/not_supported|N-central/);
  });
});

describe('sandbox-gamma: an engine error in a 200 OK on a list', () => {
  it('fails the resource (devices, companies) and deletes nothing: the stored devices stay', async () => {
    const before = (await readAll('devices')).filter((d) => d.source === 'ncentral').map((d) => d.source_id).sort();
    expect(before.length).toBeGreaterThan(0);
    for (const path of ['/api/devices', '/api/customers']) {
      nc.faults.inject({ status: 200, times: 1000, pathIncludes: path, method: 'GET' });
      try {
        const res = await svc.api(`/tenants/${svc.gammaId}/sync`, { method: 'POST', json: {} });
        expect(res.status).toBe(200);
        expect(res.body.ok).toBe(false);
        const status = await svc.api(`/tenants/${svc.gammaId}/status`);
        const conn = status.body.connections.find((c: any) => c.connector === 'ncentral');
        const resource = path === '/api/devices' ? 'devices' : 'companies';
        expect(conn.resources.find((r: any) => r.resource === resource)).toMatchObject({ last_status: 'failed', last_error: expect.stringMatching(/502/) });
      } finally {
        nc.faults.clear();
      }
      expect((await readAll('devices')).filter((d) => d.source === 'ncentral').map((d) => d.source_id).sort()).toEqual(before);
    }
    expect((await svc.api(`/tenants/${svc.gammaId}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);
  });
});
