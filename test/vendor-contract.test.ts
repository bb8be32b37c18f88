/**
 * The vendor request-contract check (test/support/vendor-contract.ts): each connector whose vendor
 * publishes a machine-readable API description (Autotask, NinjaOne, Pax8, Datto RMM, Kaseya BMS) makes its
 * whole set of calls against its simulator over HTTP (every resource synced fully and incrementally, the
 * probe, every write, every reconcile look-up), and each call must be an operation of the vendor's
 * document: its path, its parameters and properties by name, and every value by the schema's type,
 * format, enumeration and bounds. A failure names the document, the operation and the value's JSON
 * pointer. The mutation table at the end alters copies of those recorded calls one way each and requires
 * the check to refuse every one. ConnectWise and HaloPSA have no such document (fixtures/vendor-api/README.md).
 */
import { startStandalone, type SimulatorRequest } from '../src/simulators/kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../src/simulators/autotask/demo-fixtures';
import { createAutotaskSimulator } from '../src/simulators/autotask/simulator';
import { createNinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import { createPax8Simulator } from '../src/simulators/pax8/simulator';
import { createDattoRmmSimulator } from '../src/simulators/dattormm/simulator';
import { readPax8Fixtures } from '../src/simulators/pax8/test-fixtures';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { VendorHttpClient } from '../src/connectors/vendor-http';
import type { ReadConnector, SyncContext } from '../src/connectors/types';
import type { WriteContext } from '../src/connectors/write-types';
import { autotaskConnector } from '../src/connectors/autotask/connector';
import { autotaskWriter } from '../src/connectors/autotask/writer';
import { autotaskAgreementWriter } from '../src/connectors/autotask/agreement-writer';
import { autotaskProjectWriter } from '../src/connectors/autotask/project-writer';
import { ninjaOneConnector } from '../src/connectors/ninjaone/connector';
import { ninjaOneWriter } from '../src/connectors/ninjaone/writer';
import { pax8Connector } from '../src/connectors/pax8/connector';
import { dattoRmmConnector } from '../src/connectors/dattormm/connector';
import { dattoRmmWriter } from '../src/connectors/dattormm/writer';
import { checkPermissions } from '../src/connectors/dattormm/permissions';
import { pax8CompanyWriter } from '../src/connectors/pax8/company-writer';
import { clearSessionTokens } from '../src/connectors/vendor-session';
import { autotaskCapabilities } from '../src/connectors/autotask/capabilities';
import { ninjaOneCapabilities } from '../src/connectors/ninjaone/capabilities';
import { exchangeCode, pkcePair } from '../src/connect/oauth';
import { createKaseyaBmsSimulator } from '../src/simulators/kaseyabms/simulator';
import { kaseyaBmsConnector } from '../src/connectors/kaseyabms/connector';
import { kaseyaBmsWriter } from '../src/connectors/kaseyabms/writer';
import { kaseyaBmsAgreementWriter } from '../src/connectors/kaseyabms/agreement-writer';
import { kaseyaBmsCapabilities } from '../src/connectors/kaseyabms/capabilities';
import { describeFailures, recordVendorContract, VendorContract, type ContractReport } from './support/vendor-contract';

const contract = new VendorContract();

function call(vendor: string, method: string, path: string, over: Partial<SimulatorRequest> = {}): SimulatorRequest {
  return { vendor, method, path, queryKeys: [], contentType: 'application/json', body: undefined, status: 200, ...over };
}

describe('the checker', () => {
  it('refuses a contract service written at the Autotask root and names the swagger', () => {
    for (const method of ['POST', 'PATCH']) {
      const v = contract.check(call('autotask', method, '/atservicesrest/v1.0/ContractServices', { body: { contractID: 1, serviceID: 2 } }))!;
      expect(v.operation).toBeNull();
      expect(v.problems).not.toEqual([]);
      expect(describeFailures([v])).toBe(`Autotask REST swagger v1.0: ${method} /atservicesrest/v1.0/ContractServices is not documented (no path in the document matches)`);
    }
  });

  it('takes the documented child URL of a contract service and names its operation', () => {
    for (const method of ['POST', 'PATCH']) {
      const v = contract.check(call('autotask', method, '/atservicesrest/v1.0/Contracts/29684001/Services', { body: { contractID: 29684001, serviceID: 7 } }))!;
      expect(v).toMatchObject({ operation: `Autotask REST swagger v1.0: ${method} /Contracts/{parentId}/Services`, problems: [] });
    }
    // ContractServiceAdjustments is create-only, at the root and under the contract.
    expect(contract.check(call('autotask', 'POST', '/atservicesrest/v1.0/ContractServiceAdjustments', { body: { contractServiceID: 1 } }))!.problems).toEqual([]);
    expect(contract.check(call('autotask', 'PATCH', '/atservicesrest/v1.0/ContractServiceAdjustments', { body: { id: 1 } }))!.problems)
      .toEqual(['not documented: /V1.0/ContractServiceAdjustments is documented for POST only']);
  });

  it('checks required query parameters, the body and integer ids', () => {
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/ZoneInformation'))!.problems).toEqual(['query parameter "user" is required']);
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/zoneInformation', { queryKeys: ['user'] }))!)
      .toMatchObject({ operation: 'Autotask REST swagger v1.0: GET /ZoneInformation', problems: [] });
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/Tickets/query'))!.problems).toEqual(['query parameter "search" is required']);
    expect(contract.check(call('autotask', 'POST', '/atservicesrest/v1.0/Tickets'))!.problems).toEqual(['a request body is required']);
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/ContractServices/undefined'))!.problems)
      .toEqual(['path /id must be integer, was "undefined"']);
    expect(contract.check(call('ninjaone', 'GET', '/v2/device/abc'))!.problems).toEqual(['path /id must be integer, was "abc"']);
    expect(contract.check(call('ninjaone', 'GET', '/v2/devices-detailed', { queryKeys: ['pageSize', 'after', 'updatedAfter'] }))!.problems)
      .toEqual(['query parameter "updatedAfter" is not documented']);
    expect(contract.check(call('dattormm', 'GET', '/api/v2/account/devices', { queryKeys: ['max', 'lastModified'] }))!.problems)
      .toEqual(['query parameter "lastModified" is not documented']);
    expect(contract.check(call('dattormm', 'PUT', '/api/v2/device/abc/quickjob', { body: { jobName: 'x' } }))!.problems)
      .toEqual(['body /jobComponent is required']);
    expect(contract.check(call('dattormm', 'GET', '/api/v2/jobs'))!.operation).toBeNull();
    // Property names: the model's own, or one the entity's help page documents (cited in the checker).
    expect(contract.check(call('autotask', 'POST', '/atservicesrest/v1.0/Tickets', { body: { title: 'x', companyID: 3, ticketExternalRef: 'm' } }))!.problems)
      .toEqual(['body /ticketExternalRef is not in the document\'s schema']);
    expect(contract.check(call('autotask', 'PATCH', '/atservicesrest/v1.0/Contracts/1/Services', { body: { id: 5, adjustedPrice: 95 } }))!.problems).toEqual([]);

    const company = {
      name: 'Wide World Importers', phone: '503-555-0190', website: 'https://wwi.example', billOnBehalfOfEnabled: false,
      selfServiceAllowed: true, orderApprovalRequired: false,
      address: { street: '77 Dock St', city: 'Portland', stateOrProvince: 'OR', postalCode: '97201', country: 'US' },
    };
    expect(contract.check(call('pax8', 'POST', '/v1/companies', { body: company }))!)
      .toMatchObject({ operation: 'Pax8 Partner Endpoints OpenAPI 1.0.0: POST /companies', problems: [] });
    const { website: _w, ...noWebsite } = company;
    const contactWithoutEmail = { firstName: 'Ines', lastName: 'Moreau', phone: '503-555-0191' };
    expect(contract.check(call('pax8', 'POST', '/v1/companies', { body: { ...noWebsite, contacts: [contactWithoutEmail] } }))!.problems)
      .toEqual(['body /website is required', 'body /contacts/0/email is required']);
  });

  it('checks the token requests against the vendors\' authentication documents', () => {
    const pax8Token = { client_id: 'c', client_secret: 's', audience: 'https://api.pax8.com', grant_type: 'client_credentials' };
    expect(contract.check(call('pax8', 'POST', '/v1/token', { body: pax8Token }))!)
      .toMatchObject({ operation: 'Pax8 Authentication OpenAPI 1.0.0: POST /token', problems: [] });
    expect(contract.check(call('pax8', 'POST', '/v1/token', { body: { ...pax8Token, audience: undefined } }))!.problems)
      .toEqual(['body /audience is required']);
    const ninjaToken = { grant_type: 'client_credentials', client_id: 'c', client_secret: 's', scope: 'monitoring management control' };
    expect(contract.check(call('ninjaone', 'POST', '/ws/oauth/token', { body: ninjaToken, contentType: 'application/x-www-form-urlencoded' }))!)
      .toMatchObject({ operation: 'NinjaOne API docs, OAuth token endpoint: POST /ws/oauth/token', problems: [] });
    expect(contract.check(call('ninjaone', 'POST', '/ws/oauth/token', { body: { grant_type: 'client_credentials', client_id: 'c' } }))!.problems)
      .toEqual(['body property "client_secret" is required']);
    expect(contract.check(call('ninjaone', 'POST', '/ws/oauth/token', { body: { grant_type: 'refresh_token', client_id: 'c', client_secret: 's' } }))!.problems)
      .toEqual(['body property "refresh_token" is required']);
    expect(contract.check(call('ninjaone', 'GET', '/ws/oauth/token'))!.problems[0]).toMatch(/^not documented/);
  });

  it('follows an Autotask nextPageUrl only for an entity whose query is documented', () => {
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/Tickets/query/next', { queryKeys: ['paging', 'search'] }))!.problems).toEqual([]);
    expect(contract.check(call('autotask', 'GET', '/atservicesrest/v1.0/ContractServiceAdjustments/query/next'))!.problems)
      .toEqual(['no documented POST /ContractServiceAdjustments/query whose page this could be']);
  });

  it('reads every operation of every document', () => {
    expect(contract.compileAll()).toEqual([]);
  });

  it('names the formats a document declares that no validator checks', () => {
    // Pax8 types contact phone numbers as `format: phone`, which neither JSON Schema nor OpenAPI defines.
    // BMS types time spans (a .NET TimeSpan) as `format: date-span`, likewise undefined.
    expect(contract.uncheckedFormats).toEqual({ 'Pax8 Partner Endpoints OpenAPI 1.0.0': ['phone'], 'Kaseya BMS API 2.0 OpenAPI': ['date-span'] });
  });

  it('checks Kaseya BMS calls against BMS API 2.0: paths, query parameters and body properties', () => {
    expect(contract.check(call('kaseyabms', 'GET', '/v2/servicedesk/tickets', { queryKeys: ['Filter.Details', 'PageSize', 'PageNumber'] }))!)
      .toMatchObject({ operation: 'Kaseya BMS API 2.0 OpenAPI: GET /v2/servicedesk/tickets', problems: [] });
    expect(contract.check(call('kaseyabms', 'GET', '/v2/servicedesk/tickets', { queryKeys: ['Filter.ModifiedOnFrom'] }))!.problems)
      .toEqual(['query parameter "Filter.ModifiedOnFrom" is not documented']);
    expect(contract.check(call('kaseyabms', 'POST', '/v2/servicedesk/tickets/7001/notes', { body: { Details: 'x', IsInternal: true, TypeId: 1, NoteDate: '2026-11-20T09:00:00Z', Marker: 'm' } }))!.problems)
      .toEqual(['body /Marker is not in the document\'s schema']);
    expect(contract.check(call('kaseyabms', 'POST', '/v2/servicedesk/tickets/7001/timelogs', { body: { StartDate: '2026-11-20', StartTime: '09:00:00', EndTime: '10:00:00', WorkTypeId: 1 } }))!.problems)
      .toEqual(['body /RoleId is required']);
    expect(contract.check(call('kaseyabms', 'DELETE', '/v2/servicedesk/tickets/7001/notes'))!.operation).toBeNull();
    expect(contract.check(call('kaseyabms', 'GET', '/v2/servicedesk/tickets/abc'))!.problems).toEqual(['path /ticketId must be integer, was "abc"']);
  });

  it('leaves vendors without a machine-readable description unchecked', () => {
    expect(contract.check(call('connectwise', 'POST', '/v4_6_release/apis/3.0/service/tickets'))).toBeNull();
    expect(contract.check(call('halopsa', 'POST', '/api/tickets'))).toBeNull();
    expect(contract.check(call('ncentral', 'GET', '/api/devices'))).toBeNull();
  });
});

/** Runs one step; a refusal is the vendor's answer to a call already recorded, and later steps still run. */
async function attempt(what: string, step: () => Promise<unknown>, refused: string[]): Promise<void> {
  try {
    await step();
  } catch (err) {
    refused.push(`${what}: ${(err as Error).message}`);
  }
}

/** Every resource fully, then incrementally where the connector can, the probe and the id listings. */
async function syncEverything(connector: ReadConnector, ctx: SyncContext, refused: string[]): Promise<void> {
  await attempt('probe', () => connector.probe(ctx), refused);
  for (const resource of connector.resources) {
    await attempt(`sync ${resource}`, async () => { for await (const _ of connector.fetch(resource, ctx)); }, refused);
    if (connector.incremental.includes(resource)) {
      await attempt(`incremental ${resource}`, async () => {
        for await (const _ of connector.fetch(resource, { ...ctx, since: new Date('2026-01-01T00:00:00Z') }));
      }, refused);
    }
    const ids = connector.listIds?.(resource, ctx);
    if (ids) await attempt(`ids ${resource}`, async () => { for await (const _ of ids); }, refused);
  }
}

/** The requests each drive below recorded, by operation: the mutation tests alter copies of them. */
const recorded = new Map<string, Map<string, SimulatorRequest>>();

function expectDocumented(report: ContractReport, vendor: string, mustCover: string[], refused: string[]): void {
  recorded.set(vendor, report.samples);
  const covered = new Set(report.verdicts.filter((v) => v.vendor === vendor).map((v) => v.operation));
  // Never a pass by silence: the drive reached the operations it exists for.
  const missing = mustCover.filter((op) => !covered.has(op));
  const failures = describeFailures(report.failures.filter((f) => f.vendor === vendor));
  expect({ undocumented: failures.split('\n').filter(Boolean), notReached: missing, refusedSteps: missing.length ? refused : [] })
    .toEqual({ undocumented: [], notReached: [], refusedSteps: [] });
}

let seq = 0;
const marker = (vendor: string) => `wm-contract-${vendor}-${++seq}-${Date.now().toString(36)}`;

describe('every call the connectors make is in the vendor\'s document', () => {
  it('Autotask: sync of every resource, every write and every reconcile look-up', async () => {
    // The vendor's and the writer's day: inside the demo contract (2026), so that its lines dated 2026-12 are writable whenever this runs.
    const started = Date.now();
    const clock = () => Date.parse('2026-11-20T12:00:00Z') + (Date.now() - started);
    const sim = createAutotaskSimulator({ now: clock });
    const fixtures = loadAutotaskDemoFixtures();
    sim.seed(AUTOTASK_DEMO_INSTANCE, fixtures.resources);
    // More tickets than a page holds (500), so the sync follows nextPageUrl.
    sim.grow(AUTOTASK_DEMO_INSTANCE, 'tickets', 600);
    const server = await startStandalone(sim);
    const recording = recordVendorContract(contract);
    const refused: string[] = [];
    try {
      const base = {
        baseUrl: `${server.url}/atservicesrest/v1.0`,
        credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
        http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 0 }),
        now: clock,
      };
      const ctx: WriteContext = base;
      await syncEverything(autotaskConnector, { ...base, statusMapping: fixtures.statusMapping, since: null }, refused);
      // The connect page's permission check (entityInformation per entity).
      await attempt('permission check', () => autotaskCapabilities.connect.checkPermissions!({ ...base, statusMapping: {}, since: null }), refused);

      // Tickets, notes, time: each write, then its reconcile look-up.
      const ticket = {
        marker: marker('at'), summary: 'HL-DC01 backup job failed two nights running', description: 'Veeam job ended with error 0x80070005.',
        companyName: 'Harbor Logistics LLC', companySourceId: '3', boardSourceId: '29683481', statusSourceId: '1', prioritySourceId: '1',
        projectSourceId: null, vendorNative: null,
      };
      let ticketRef = '';
      await attempt('create ticket', async () => { ticketRef = (await autotaskWriter.createTicket(ctx, ticket)).ticketRef; }, refused);
      await attempt('find ticket', () => autotaskWriter.findTicketByMarker(ctx, ticket.marker), refused);
      ticketRef ||= String((sim.list(AUTOTASK_DEMO_INSTANCE, 'Tickets')[0] as { id: number }).id);
      await attempt('update ticket', () => autotaskWriter.updateTicket(ctx, ticketRef, { summary: 'HL-DC01 backup fixed', statusSourceId: '5' }), refused);
      const note = { marker: marker('at'), text: 'Re-ran the job manually; it completed.', internal: false, resolution: false };
      await attempt('add note', () => autotaskWriter.addNote(ctx, ticketRef, note), refused);
      await attempt('find note', () => autotaskWriter.findNoteByMarker(ctx, ticketRef, note.marker), refused);
      const time = { marker: marker('at'), ticketRef, hours: 1.25, billable: true, memberRef: '29682886', start: new Date('2026-11-20T15:30:00Z') };
      await attempt('time entry', () => autotaskWriter.createTimeEntry(ctx, time), refused);
      await attempt('find time entry', () => autotaskWriter.findTimeEntryByMarker(ctx, time), refused);

      // Agreement lines: add, find, change units and price, end, and a replace (end + add).
      type Row = Record<string, any>;
      const CONTRACT = 29684001;
      const services = () => sim.list(AUTOTASK_DEMO_INSTANCE, 'Services') as Row[];
      const onContract = () => (sim.list(AUTOTASK_DEMO_INSTANCE, 'ContractServices') as Row[]).filter((s) => s.contractID === CONTRACT);
      const freeService = () => services().find((s) => !onContract().some((cs) => cs.serviceID === s.id))!;
      const lineDraft = () => {
        const s = freeService();
        return {
          marker: marker('at'), agreementSourceId: String(CONTRACT), productSourceId: String(s.id),
          product: { sourceId: String(s.id), name: s.name, sku: null, unitPrice: s.unitPrice, unitCost: s.unitCost, active: s.isActive },
          quantity: 8, unitPrice: 100, unitCost: null, effectiveDate: '2026-12-01', description: null,
        };
      };
      const current = { quantity: 8, unitPrice: null, unitCost: null, productSourceId: null, effectiveStart: '2026-01-01', effectiveEnd: '2026-12-31' };
      const add = lineDraft();
      let lineRef = String(onContract()[0].id);
      await attempt('add line', async () => { lineRef = (await autotaskAgreementWriter.addLine(ctx, add)).lineRef; }, refused);
      await attempt('find line', () => autotaskAgreementWriter.findLineByMarker(ctx, String(CONTRACT), add.marker), refused);
      const line = { agreementSourceId: String(CONTRACT), lineSourceId: lineRef, current };
      await attempt('change line', () => autotaskAgreementWriter.rewriteLine(ctx, { ...line, marker: marker('at'), quantity: 12, unitPrice: 95, effectiveDate: '2026-12-01' }), refused);
      await attempt('end line', () => autotaskAgreementWriter.endLine(ctx, { ...line, marker: marker('at'), endDate: '2026-12-01' }), refused);
      const replacement = lineDraft();
      const other = String(onContract().find((s) => String(s.id) !== lineRef)?.id ?? lineRef);
      await attempt('replace line', async () => {
        await autotaskAgreementWriter.endLine(ctx, { agreementSourceId: String(CONTRACT), lineSourceId: other, current, marker: marker('at'), endDate: '2026-12-01', replacedBy: replacement });
        await autotaskAgreementWriter.addLine(ctx, replacement);
      }, refused);
      await attempt('unknown line', () => autotaskAgreementWriter.rewriteLine(ctx, { ...line, lineSourceId: '999999999', marker: marker('at'), quantity: 1, effectiveDate: '2026-12-01' }), refused);

      // Projects: a note and a task, each with its reconcile look-up.
      const project = String((sim.list(AUTOTASK_DEMO_INSTANCE, 'Projects')[0] as { id: number }).id);
      const projectNote = { marker: marker('at'), text: 'Cut-over moved to Saturday.' };
      await attempt('project note', () => autotaskProjectWriter.addNote(ctx, project, projectNote), refused);
      await attempt('find project note', () => autotaskProjectWriter.findNote(ctx, project, projectNote.marker), refused);
      const task = { marker: marker('at'), summary: 'Migrate shared mailboxes', description: 'Six shared mailboxes.', phase: null };
      await attempt('project task', () => autotaskProjectWriter.addItem(ctx, project, task), refused);
      await attempt('find project task', () => autotaskProjectWriter.findItem(ctx, project, task), refused);
    } finally {
      await server.close();
    }
    expectDocumented(recording.stop(), 'autotask', [
      'Autotask REST swagger v1.0: GET /ZoneInformation',
      'Autotask REST swagger v1.0: POST /Tickets/query',
      'Autotask REST swagger v1.0: GET /Tickets/entityInformation/fields',
      'Autotask REST swagger v1.0: POST /Tickets',
      'Autotask REST swagger v1.0: PATCH /Tickets',
      'Autotask REST swagger v1.0: POST /Tickets/{parentId}/Notes',
      'Autotask REST swagger v1.0: POST /TimeEntries',
      'Autotask REST swagger v1.0: POST /ContractServices/query',
      'Autotask REST swagger v1.0: POST /ContractServiceAdjustments',
      'Autotask REST swagger v1.0: POST /Contracts/{parentId}/Services',
      'Autotask REST swagger v1.0: PATCH /Contracts/{parentId}/Services',
      'Autotask REST swagger v1.0: POST /Projects/{parentId}/Notes',
      'Autotask REST swagger v1.0: POST /Projects/{parentId}/Tasks',
    ], refused);
  });

  it('NinjaOne: token, sync of every resource, the deploy and its reconcile look-up', async () => {
    const sim = createNinjaOneSimulator({ clients: { sandbox: { secret: 'sandbox-secret', instance: 'sandbox-alpha' } } });
    const fixtures = loadVendorFixtures('sandbox-alpha', 'ninjaone').resources;
    sim.seed('sandbox-alpha', fixtures);
    // More devices and software rows than a page holds (1,000): the sync pages with `after` and the report cursor.
    sim.grow('sandbox-alpha', 'devices', 1100);
    sim.grow('sandbox-alpha', 'software', 1100);
    const server = await startStandalone(sim);
    // A user's approval on the consent page (a browser's calls, before the recording): the code the service exchanges.
    const { verifier, challenge } = pkcePair();
    const redirectUri = 'https://service.example/connect/oauth/ninjaone/callback';
    const authorize = { response_type: 'code', client_id: 'sandbox', redirect_uri: redirectUri, scope: 'monitoring management control offline_access', state: 's', code_challenge: challenge, code_challenge_method: 'S256' };
    const approved = await fetch(`${server.url}/ws/oauth/authorize`, { method: 'POST', body: new URLSearchParams({ ...authorize, decision: 'approve' }), redirect: 'manual' });
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const recording = recordVendorContract(contract);
    const refused: string[] = [];
    try {
      const base = { baseUrl: server.url, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 0 }) };
      await syncEverything(ninjaOneConnector, { ...base, statusMapping: {}, since: null }, refused);
      // The connect page: the code exchange (PKCE), then the permission check with the refresh token it gave.
      await attempt('code exchange', async () => {
        const tokens = await exchangeCode(base.http, server.url, ninjaOneCapabilities.connect.oauth!, base.credentials, code, verifier, redirectUri);
        if (!tokens.ok) throw new Error(tokens.error);
        await ninjaOneCapabilities.connect.checkPermissions!({ ...base, credentials: { ...base.credentials, refreshToken: tokens.refreshToken }, statusMapping: {}, since: null });
      }, refused);
      const device = fixtures.devices[0] as { id: number };
      const script = fixtures.scripts[0] as { id: number; name: string };
      const deploy = { deviceRef: String(device.id), packageRef: String(script.id), packageName: script.name };
      await attempt('deploy', () => ninjaOneWriter.deploy(base, deploy), refused);
      await attempt('find deploy', () => ninjaOneWriter.findDeploy(base, deploy, new Date(Date.now() - 60_000)), refused);
    } finally {
      await server.close();
    }
    expectDocumented(recording.stop(), 'ninjaone', [
      'NinjaOne API docs, OAuth token endpoint: POST /ws/oauth/token',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): GET /v2/organizations',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): GET /v2/devices-detailed',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): GET /v2/queries/software',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): GET /v2/alerts',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): POST /v2/device/{id}/script/run',
      'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft): GET /v2/device/{id}/activities',
    ], refused);
  });

  it('Datto RMM: token, sync of every resource, the permission checks, the deploy and its reconcile look-up', async () => {
    const sim = createDattoRmmSimulator({ clients: { 'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta' } } });
    const fixtures = loadVendorFixtures('sandbox-beta', 'dattormm').resources;
    sim.seed('sandbox-beta', fixtures);
    // More devices than a page holds (250): the sync follows nextPageUrl.
    sim.grow('sandbox-beta', 'devices', 300);
    const server = await startStandalone(sim);
    const recording = recordVendorContract(contract);
    const refused: string[] = [];
    try {
      const base = { baseUrl: `${server.url}/api`, credentials: { apiKey: 'sandbox-beta', apiSecret: 'sandbox-secret' }, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 0 }) };
      await syncEverything(dattoRmmConnector, { ...base, statusMapping: {}, since: null }, refused);
      await attempt('permissions', () => checkPermissions(base), refused);
      const device = (fixtures.devices as { uid: string; online: boolean }[]).find((d) => d.online)!;
      const component = fixtures.components[0] as { uid: string; name: string };
      const deploy = { deviceRef: device.uid, packageRef: component.uid, packageName: component.name, marker: marker('datto') };
      await attempt('deploy', () => dattoRmmWriter.deploy(base, deploy), refused);
      await attempt('find deploy', () => dattoRmmWriter.findDeploy(base, deploy, new Date(Date.now() - 60_000)), refused);
    } finally {
      await server.close();
    }
    expectDocumented(recording.stop(), 'dattormm', [
      'Datto RMM API help, OAuth token endpoint: POST /auth/oauth/token',
      'Datto RMM API OpenAPI (build 235): GET /v2/account/sites',
      'Datto RMM API OpenAPI (build 235): GET /v2/account/devices',
      'Datto RMM API OpenAPI (build 235): GET /v2/account/alerts/open',
      'Datto RMM API OpenAPI (build 235): GET /v2/audit/device/{deviceUid}/software',
      'Datto RMM API OpenAPI (build 235): GET /v2/account/components',
      'Datto RMM API OpenAPI (build 235): GET /v2/system/request_rate',
      'Datto RMM API OpenAPI (build 235): GET /v2/device/{deviceUid}',
      'Datto RMM API OpenAPI (build 235): PUT /v2/device/{deviceUid}/quickjob',
      'Datto RMM API OpenAPI (build 235): GET /v2/activity-logs',
    ], refused);
  });

  it('Pax8: token, sync of every resource, the company create and its reconcile look-up', async () => {
    const sim = createPax8Simulator();
    sim.seed('sandbox-alpha', readPax8Fixtures());
    // More companies than a page holds (200): the sync and the reconcile look-up page.
    sim.grow('sandbox-alpha', 'companies', 250);
    const server = await startStandalone(sim);
    clearSessionTokens();
    const recording = recordVendorContract(contract);
    const refused: string[] = [];
    try {
      const base = { baseUrl: `${server.url}/v1`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 0 }) };
      await syncEverything(pax8Connector, { ...base, statusMapping: {}, since: null }, refused);
      const company = {
        name: 'Wide World Importers',
        address: { street: '77 Dock St', street2: 'Unit 4', city: 'Portland', stateOrProvince: 'OR', postalCode: '97201', country: 'US' },
        phone: '503-555-0190', website: 'https://wideworldimporters.example', externalId: null, billOnBehalfOfEnabled: false,
        selfServiceAllowed: true, orderApprovalRequired: false,
        contacts: [{ firstName: 'Ines', lastName: 'Moreau', email: 'ines@wideworldimporters.example', phone: '503-555-0191' }],
      };
      await attempt('create company', () => pax8CompanyWriter.createCompany(base, company), refused);
      await attempt('find company', () => pax8CompanyWriter.findCompany(base, company), refused);
    } finally {
      await server.close();
    }
    expectDocumented(recording.stop(), 'pax8', [
      'Pax8 Authentication OpenAPI 1.0.0: POST /token',
      'Pax8 Partner Endpoints OpenAPI 1.0.0: GET /companies',
      'Pax8 Partner Endpoints OpenAPI 1.0.0: GET /products',
      'Pax8 Partner Endpoints OpenAPI 1.0.0: GET /subscriptions',
      'Pax8 Partner Endpoints OpenAPI 1.0.0: POST /companies',
    ], refused);
  });

  it('Kaseya BMS: token, sync of every resource, the permission checks, every write and every reconcile look-up', async () => {
    const sim = createKaseyaBmsSimulator();
    sim.seed('sandbox-gamma', loadVendorFixtures('sandbox-gamma', 'kaseyabms').resources);
    const server = await startStandalone(sim);
    const recording = recordVendorContract(contract);
    const refused: string[] = [];
    try {
      const base = { baseUrl: server.url, credentials: { username: 'sandbox', password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA' }, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 0 }) };
      await syncEverything(kaseyaBmsConnector, { ...base, statusMapping: {}, since: null }, refused);
      await attempt('permissions', () => kaseyaBmsCapabilities.connect.checkPermissions!({ ...base, statusMapping: {}, since: null }), refused);
      const draft = {
        marker: marker('bms'), summary: 'Contract check ticket', description: 'From the contract test', companyName: 'Northwind Logistics', companySourceId: '201',
        boardSourceId: '1', statusSourceId: null, prioritySourceId: '3', projectSourceId: null, vendorNative: null,
      };
      let ref = '7001';
      await attempt('create ticket', async () => { ref = (await kaseyaBmsWriter.createTicket(base, draft)).ticketRef; }, refused);
      await attempt('find ticket', () => kaseyaBmsWriter.findTicketByMarker(base, draft.marker), refused);
      await attempt('update ticket', () => kaseyaBmsWriter.updateTicket(base, ref, { summary: 'Renamed', statusSourceId: '2', boardSourceId: '2' }), refused);
      const note = { marker: marker('bms'), text: 'A note', internal: true, resolution: false };
      await attempt('note', () => kaseyaBmsWriter.addNote(base, ref, note), refused);
      await attempt('find note', () => kaseyaBmsWriter.findNoteByMarker(base, ref, note.marker), refused);
      const time = { marker: marker('bms'), ticketRef: ref, hours: 1.5, billable: true, memberRef: '12', start: new Date('2026-11-20T09:00:00Z') };
      await attempt('time', () => kaseyaBmsWriter.createTimeEntry(base, time), refused);
      await attempt('find time', () => kaseyaBmsWriter.findTimeEntryByMarker(base, time), refused);
      await attempt('recurring service', () => kaseyaBmsAgreementWriter.addLine(base, {
        marker: marker('bms'), agreementSourceId: '801', productSourceId: '33', quantity: 5, unitPrice: 26.4, unitCost: 22, effectiveDate: '2026-12-01', description: null,
        product: { sourceId: '33', name: 'Microsoft 365 Business Premium', sku: null, unitPrice: null, unitCost: null, active: true },
      }), refused);
    } finally {
      await server.close();
    }
    const doc = 'Kaseya BMS API 2.0 OpenAPI';
    expectDocumented(recording.stop(), 'kaseyabms', [
      'POST /v2/security/authenticate', 'GET /v2/security/userinfo', 'GET /v2/crm/accounts/summary', 'GET /v2/crm/contacts/summary',
      'GET /v2/hr/employees/lookup', 'GET /v2/system/queues/lookup', 'GET /v2/system/statuses/lookup', 'GET /v2/system/priorities/lookup',
      'GET /v2/servicedesk/tickets', 'GET /v2/finance/contracts/summary', 'GET /v2/admin/finance/services/lookup', 'GET /v2/project/projects/summary',
      'GET /v2/crm/accounts/{accountId}/locations/lookup', 'POST /v2/servicedesk/tickets', 'PATCH /v2/servicedesk/tickets/{ticketId}',
      'POST /v2/servicedesk/tickets/{ticketId}/notes', 'GET /v2/servicedesk/tickets/{ticketId}/notes', 'POST /v2/servicedesk/tickets/{ticketId}/timelogs',
      'GET /v2/servicedesk/tickets/{ticketId}/timelogs', 'POST /v2/finance/contracts/recurringservices/{contractId}/services',
    ].map((op) => `${doc}: ${op}`), refused);
  });
});


type Kind = 'wrong type' | 'outside an enumeration' | 'undocumented path' | 'undocumented query parameter'
  | 'undocumented body property' | 'bad format' | 'outside a bound' | 'read-only property' | 'wrong path value'
  | 'missing header' | 'wrong media type';

interface Mutation {
  vendor: string;
  kind: Kind;
  /** The recorded request it alters: the operation the connector's real call matched. */
  of: string;
  change: (call: SimulatorRequest) => void;
  /** Every problem the altered call must have (exactly these). */
  problems: string[];
  /** The operation the altered call is still named by; null when its path left the document. */
  operation?: string | null;
}

const AT = 'Autotask REST swagger v1.0';
const NINJA = 'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft)';
const DATTO = 'Datto RMM API OpenAPI (build 235)';
const PAX8 = 'Pax8 Partner Endpoints OpenAPI 1.0.0';
const BMS = 'Kaseya BMS API 2.0 OpenAPI';

const body = (c: SimulatorRequest) => c.body as Record<string, any>;
const setQuery = (name: string, ...values: string[]) => (c: SimulatorRequest) => {
  c.query = { ...c.query, [name]: values };
  c.queryKeys = [...new Set([...c.queryKeys, name])];
};
/** Replaces the path's segment at `index` (0 = the first after the simulator's mount). */
const setSegment = (index: number, value: string) => (c: SimulatorRequest) => {
  const segments = c.path.split('/');
  segments[index + 1] = value;
  c.path = segments.join('/');
};

/**
 * Each mutation alters a copy of a request a connector really sent (recorded by the drives above) in one
 * way the vendor's document refuses; the checker must name the document, the operation and the value.
 * Autotask's swagger declares no enumeration a request can carry (its enums are the NodeType of .NET
 * expression models, reachable only through the read-only SoapParentPropertyId), so it has none here.
 */
const MUTATIONS: Mutation[] = [
  { vendor: 'autotask', kind: 'wrong type', of: `${AT}: POST /Tickets`, change: (c) => { body(c).companyID = '3'; }, problems: ['body /companyID must be integer, was "3"'] },
  { vendor: 'autotask', kind: 'bad format', of: `${AT}: POST /TimeEntries`, change: (c) => { body(c).startDateTime = '2026-11-20 15:30'; }, problems: ['body /startDateTime must be a "date-time", was "2026-11-20 15:30"'] },
  { vendor: 'autotask', kind: 'outside a bound', of: `${AT}: POST /Tickets`, change: (c) => { body(c).queueID = 2 ** 31; }, problems: ['body /queueID must be a "int32", was 2147483648'] },
  { vendor: 'autotask', kind: 'undocumented path', of: `${AT}: POST /Contracts/{parentId}/Services`, change: (c) => { c.path = '/atservicesrest/v1.0/ContractServices'; }, problems: ['not documented: no path in the document matches'], operation: null },
  { vendor: 'autotask', kind: 'undocumented query parameter', of: `${AT}: GET /Tickets/{id}`, change: setQuery('includeNotes', 'true'), problems: ['query parameter "includeNotes" is not documented'] },
  { vendor: 'autotask', kind: 'undocumented body property', of: `${AT}: POST /Tickets`, change: (c) => { body(c).ticketExternalRef = 'm-1'; }, problems: ['body /ticketExternalRef is not in the document\'s schema'] },
  { vendor: 'autotask', kind: 'undocumented body property', of: `${AT}: POST /Companies/query`, change: (c) => { body(c).filter[0].fieldName = 'id'; }, problems: ['body /filter/0/fieldName is not in the document\'s schema'] },
  { vendor: 'autotask', kind: 'read-only property', of: `${AT}: POST /Projects/{parentId}/Tasks`, change: (c) => { body(c).soapParentPropertyId = {}; }, problems: ['body /soapParentPropertyId is read-only in the document\'s schema, a request does not send it'] },
  { vendor: 'autotask', kind: 'wrong path value', of: `${AT}: GET /Tickets/{id}`, change: setSegment(3, 'T-7661'), problems: ['path /id must be integer, was "T-7661"'] },
  { vendor: 'autotask', kind: 'missing header', of: `${AT}: POST /Tickets`, change: (c) => { c.headerNames = c.headerNames!.filter((h) => h !== 'apiintegrationcode'); }, problems: ['header "ApiIntegrationCode" is required'] },

  { vendor: 'ninjaone', kind: 'wrong type', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: (c) => { body(c).id = '301'; }, problems: ['body /id must be integer, was "301"'] },
  { vendor: 'ninjaone', kind: 'outside an enumeration', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: (c) => { body(c).type = 'SCRIPTS'; }, problems: ['body /type must be one of "ACTION", "SCRIPT", was "SCRIPTS"'] },
  { vendor: 'ninjaone', kind: 'bad format', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: (c) => { body(c).uid = 'install-7zip'; }, problems: ['body /uid must be a "uuid", was "install-7zip"'] },
  { vendor: 'ninjaone', kind: 'undocumented path', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: setSegment(3, 'scripts'), problems: ['not documented: no path in the document matches'], operation: null },
  { vendor: 'ninjaone', kind: 'undocumented query parameter', of: `${NINJA}: GET /v2/devices-detailed`, change: setQuery('updatedAfter', '1764547200'), problems: ['query parameter "updatedAfter" is not documented'] },
  { vendor: 'ninjaone', kind: 'undocumented body property', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: (c) => { body(c).timeout = 600; }, problems: ['body /timeout is not in the document\'s schema'] },
  { vendor: 'ninjaone', kind: 'wrong type', of: `${NINJA}: GET /v2/device/{id}/activities`, change: setQuery('pageSize', 'all'), problems: ['query /pageSize must be integer, was "all"'] },
  { vendor: 'ninjaone', kind: 'outside a bound', of: `${NINJA}: GET /v2/device/{id}/activities`, change: setQuery('pageSize', '5000'), problems: ['query /pageSize must be <= 1000, was 5000'] },
  { vendor: 'ninjaone', kind: 'wrong path value', of: `${NINJA}: POST /v2/device/{id}/script/run`, change: setSegment(2, 'HL-DC01'), problems: ['path /id must be integer, was "HL-DC01"'] },

  { vendor: 'dattormm', kind: 'wrong type', of: `${DATTO}: PUT /v2/device/{deviceUid}/quickjob`, change: (c) => { body(c).jobComponent.variables = 'none'; }, problems: ['body /jobComponent/variables must be array, was "none"'] },
  { vendor: 'dattormm', kind: 'wrong type', of: `${DATTO}: GET /v2/account/devices`, change: setQuery('max', 'all'), problems: ['query /max must be integer, was "all"'] },
  { vendor: 'dattormm', kind: 'outside an enumeration', of: `${DATTO}: GET /v2/activity-logs`, change: setQuery('order', 'newest'), problems: ['query /order must be one of "asc", "desc", was "newest"'] },
  { vendor: 'dattormm', kind: 'outside an enumeration', of: `${DATTO}: GET /v2/activity-logs`, change: setQuery('entities', 'device', 'site'), problems: ['query /entities/1 must be one of "device", "user", was "site"'] },
  { vendor: 'dattormm', kind: 'bad format', of: `${DATTO}: GET /v2/account/devices`, change: setQuery('max', '3000000000'), problems: ['query /max must be a "int32", was 3000000000'] },
  { vendor: 'dattormm', kind: 'wrong type', of: `${DATTO}: GET /v2/activity-logs`, change: setQuery('siteIds', 'HQ'), problems: ['query /siteIds/0 must be integer, was "HQ"'] },
  { vendor: 'dattormm', kind: 'undocumented path', of: `${DATTO}: GET /v2/device/{deviceUid}`, change: setSegment(2, 'devices'), problems: ['not documented: no path in the document matches'], operation: null },
  { vendor: 'dattormm', kind: 'undocumented query parameter', of: `${DATTO}: GET /v2/account/devices`, change: setQuery('lastModified', '2026-11-01T00:00:00Z'), problems: ['query parameter "lastModified" is not documented'] },
  { vendor: 'dattormm', kind: 'undocumented body property', of: `${DATTO}: PUT /v2/device/{deviceUid}/quickjob`, change: (c) => { body(c).jobComponent.timeout = 600; }, problems: ['body /jobComponent/timeout is not in the document\'s schema'] },

  { vendor: 'pax8', kind: 'wrong type', of: `${PAX8}: POST /companies`, change: (c) => { body(c).selfServiceAllowed = 'true'; }, problems: ['body /selfServiceAllowed must be boolean, was "true"'] },
  { vendor: 'pax8', kind: 'wrong type', of: `${PAX8}: GET /products`, change: setQuery('page', 'first'), problems: ['query /page must be number, was "first"'] },
  { vendor: 'pax8', kind: 'outside an enumeration', of: `${PAX8}: POST /companies`, change: (c) => { body(c).contacts[0].types[0].type = 'Owner'; }, problems: ['body /contacts/0/types/0/type must be one of "Admin", "Billing", "Technical", was "Owner"'] },
  { vendor: 'pax8', kind: 'outside an enumeration', of: `${PAX8}: GET /companies`, change: setQuery('sort', 'revenue'), problems: ['query /sort must be one of "name", "city", "country", "stateOrProvince", "postalCode", was "revenue"'] },
  { vendor: 'pax8', kind: 'bad format', of: `${PAX8}: POST /companies`, change: (c) => { body(c).contacts[0].email = 'ines at wideworldimporters'; }, problems: ['body /contacts/0/email must be a "email", was "ines at wideworldimporters"'] },
  { vendor: 'pax8', kind: 'bad format', of: `${PAX8}: GET /companies/{companyId}/contacts`, change: setSegment(2, 'wide-world'), problems: ['path /companyId must be a "uuid", was "wide-world"'] },
  { vendor: 'pax8', kind: 'bad format', of: `${PAX8}: POST /companies`, change: (c) => { body(c).address.country = 'USA'; }, problems: ['body /address/country must match pattern "^[A-Z]{2}$", was "USA"'] },
  { vendor: 'pax8', kind: 'outside a bound', of: `${PAX8}: GET /subscriptions`, change: setQuery('size', '500'), problems: ['query /size must be <= 200, was 500'] },
  { vendor: 'pax8', kind: 'undocumented path', of: `${PAX8}: GET /companies`, change: (c) => { c.path = '/v1/customers'; }, problems: ['not documented: no path in the document matches'], operation: null },
  { vendor: 'pax8', kind: 'undocumented query parameter', of: `${PAX8}: GET /products`, change: setQuery('updatedSince', '2026-11-01'), problems: ['query parameter "updatedSince" is not documented'] },
  { vendor: 'pax8', kind: 'undocumented body property', of: `${PAX8}: POST /companies`, change: (c) => { body(c).industry = 'Logistics'; }, problems: ['body /industry is not in the document\'s schema'] },
  { vendor: 'pax8', kind: 'wrong media type', of: `${PAX8}: POST /companies`, change: (c) => { c.contentType = 'application/x-www-form-urlencoded'; }, problems: ['body is sent as "application/x-www-form-urlencoded", the operation takes "application/json"'] },
  { vendor: 'pax8', kind: 'read-only property', of: `${PAX8}: POST /companies`, change: (c) => { body(c).status = 'Active'; }, problems: ['body /status is read-only in the document\'s schema, a request does not send it'] },

  { vendor: 'kaseyabms', kind: 'wrong type', of: `${BMS}: POST /v2/servicedesk/tickets`, change: (c) => { body(c).AccountId = '201'; }, problems: ['body /AccountId must be integer, was "201"'] },
  { vendor: 'kaseyabms', kind: 'wrong type', of: `${BMS}: GET /v2/servicedesk/tickets`, change: setQuery('PageSize', 'all'), problems: ['query /PageSize must be integer, was "all"'] },
  { vendor: 'kaseyabms', kind: 'outside an enumeration', of: `${BMS}: PATCH /v2/servicedesk/tickets/{ticketId}`, change: (c) => { (c.body as Record<string, unknown>[])[0].OperationType = 9; }, problems: ['body /0/OperationType must be one of 0, 1, 2, 3, 4, 5, 6, was 9'] },
  { vendor: 'kaseyabms', kind: 'bad format', of: `${BMS}: POST /v2/servicedesk/tickets/{ticketId}/notes`, change: (c) => { body(c).NoteDate = '2026-12-07 09:57'; }, problems: ['body /NoteDate must be a "date-time", was "2026-12-07 09:57"'] },
  { vendor: 'kaseyabms', kind: 'bad format', of: `${BMS}: GET /v2/crm/accounts/summary`, change: setQuery('Filter.ModifiedOnFrom', 'yesterday'), problems: ['query /Filter.ModifiedOnFrom must be a "date-time", was "yesterday"'] },
  { vendor: 'kaseyabms', kind: 'outside a bound', of: `${BMS}: POST /v2/servicedesk/tickets`, change: (c) => { body(c).PriorityId = 0; }, problems: ['body /PriorityId must be >= 1, was 0'] },
  { vendor: 'kaseyabms', kind: 'undocumented path', of: `${BMS}: POST /v2/servicedesk/tickets/{ticketId}/notes`, change: setSegment(2, 'ticket'), problems: ['not documented: no path in the document matches'], operation: null },
  { vendor: 'kaseyabms', kind: 'undocumented query parameter', of: `${BMS}: GET /v2/servicedesk/tickets`, change: setQuery('Filter.ModifiedOnFrom', '2026-11-01T00:00:00Z'), problems: ['query parameter "Filter.ModifiedOnFrom" is not documented'] },
  { vendor: 'kaseyabms', kind: 'undocumented body property', of: `${BMS}: POST /v2/servicedesk/tickets/{ticketId}/notes`, change: (c) => { body(c).Marker = 'm-1'; }, problems: ['body /Marker is not in the document\'s schema'] },
  { vendor: 'kaseyabms', kind: 'undocumented body property', of: `${BMS}: POST /v2/finance/contracts/recurringservices/{contractId}/services`, change: (c) => { (c.body as Record<string, unknown>[])[0].Marker = 'm-1'; }, problems: ['body /0/Marker is not in the document\'s schema'] },
  { vendor: 'kaseyabms', kind: 'wrong path value', of: `${BMS}: POST /v2/servicedesk/tickets/{ticketId}/notes`, change: setSegment(3, 'T-7001'), problems: ['path /ticketId must be integer, was "T-7001"'] },
  { vendor: 'kaseyabms', kind: 'wrong media type', of: `${BMS}: POST /v2/security/authenticate`, change: (c) => { c.contentType = 'application/x-www-form-urlencoded'; }, problems: ['body is sent as "application/x-www-form-urlencoded", the operation takes "multipart/form-data"'] },
];

describe('mutations of recorded requests fail the check, naming the document, the operation and the value', () => {
  it('covers every kind on every described vendor', () => {
    const kinds: Kind[] = ['wrong type', 'undocumented path', 'undocumented query parameter', 'undocumented body property', 'bad format'];
    for (const vendor of ['autotask', 'ninjaone', 'dattormm', 'pax8', 'kaseyabms']) {
      const has = new Set(MUTATIONS.filter((m) => m.vendor === vendor).map((m) => m.kind));
      expect({ vendor, missing: [...kinds, ...(vendor === 'autotask' ? [] : ['outside an enumeration'])].filter((k) => !has.has(k as Kind)) }).toEqual({ vendor, missing: [] });
    }
  });

  it.each(MUTATIONS.map((m) => [`${m.vendor}, ${m.kind}: ${m.problems[0]}`, m] as const))('%s', (_name, m) => {
    const sample = recorded.get(m.vendor)?.get(m.of);
    // The drive above must have sent the request this alters: a mutation of nothing cannot pass.
    expect(sample).toBeDefined();
    expect(contract.check(sample!)!.problems).toEqual([]);
    const mutated = structuredClone(sample!);
    m.change(mutated);
    const verdict = contract.check(mutated)!;
    expect(verdict.problems).toEqual(m.problems);
    const line = describeFailures([verdict]);
    if (m.operation === null) {
      expect(verdict.operation).toBeNull();
      expect(line.startsWith(`${verdict.documents.join(' / ')}: ${mutated.method} ${mutated.path} is not documented`)).toBe(true);
    } else {
      expect(verdict.operation).toBe(m.of);
      expect(line).toBe(`${m.of} (sent ${mutated.method} ${mutated.path}): ${m.problems.join('; ')}`);
    }
  });
});
