/**
 * ConnectWise as strict as the real one: ProjectTicket has no `externalXRef` (connectwise-rest
 * ManageTypes, pyconnectwise ProjectTicket model), and a `conditions` clause naming a field the
 * resource does not have is refused with 400 "... is not a recognized name"
 * (LabtechConsulting/ConnectWise-Manage-Powershell issue 4).
 */
import { startStandalone } from '../../simulators/kit';
import { createConnectWiseSimulator } from '../../simulators/connectwise/simulator';
import { loadConnectWiseFixtures } from '../../simulators/connectwise/fixtures';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import type { TicketDraft, WriteContext } from '../write-types';
import { connectwiseWriter as cw } from './writer';

const INSTANCE = 'sandbox-alpha';
const { resources: fixtures } = loadConnectWiseFixtures(INSTANCE);
const CREDENTIALS = { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' };

const sim = createConnectWiseSimulator();
let mount: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ url: mount, close } = await startStandalone(sim));
});
afterAll(() => close());
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
});

const base = () => `${mount}/v4_6_release/apis/3.0`;
const ctx = (): WriteContext => ({ baseUrl: base(), credentials: CREDENTIALS, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }) });

async function api(path: string, init: { method?: string; json?: unknown } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base()}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Basic ${Buffer.from(`${CREDENTIALS.companyId}+${CREDENTIALS.publicKey}:${CREDENTIALS.privateKey}`).toString('base64')}`,
      clientId: CREDENTIALS.clientId,
      'content-type': 'application/json',
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  return { status: res.status, body: await res.json() };
}
const cond = (c: string) => `conditions=${encodeURIComponent(c)}`;

let seq = 0;
const draft = (over: Partial<TicketDraft> = {}): TicketDraft => ({
  marker: `msp-${(++seq).toString(16).padStart(8, '0')}${Date.now().toString(16)}`,
  summary: 'MFA not enforced for 3 admin accounts',
  description: 'Three global admins sign in without MFA.',
  companyName: 'Contoso Ltd',
  companySourceId: '19291',
  boardSourceId: '1',
  statusSourceId: '1',
  prioritySourceId: '2',
  projectSourceId: null,
  vendorNative: null,
  ...over,
});

describe('the simulator is as strict as ConnectWise', () => {
  it('stores only ProjectTicket schema fields: externalXRef is dropped', async () => {
    const created = await api('/project/tickets', { method: 'POST', json: { summary: 'Check backups', phase: { id: 204 }, externalXRef: 'msp-abc' } });
    expect(created.status).toBe(201);
    expect(created.body.externalXRef).toBeUndefined();
    expect(sim.get(INSTANCE, 'project_tickets', created.body.id)!.externalXRef).toBeUndefined();
  });

  it('refuses conditions on a field the resource does not have, in ConnectWise\'s error shape', async () => {
    const refused = await api(`/project/tickets?${cond('externalXRef = "msp-abc"')}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('externalXRef is not a recognized name'),
      errors: [expect.objectContaining({ field: 'externalXRef', message: expect.stringContaining('is not a recognized name') })],
    });
    expect((await api(`/service/tickets?${cond('nosuchfield = 1')}`)).status).toBe(400);
    // Per resource: service tickets do have externalXRef; nested and _info fields stay usable.
    expect((await api(`/service/tickets?${cond('externalXRef = "msp-abc"')}`)).status).toBe(200);
    expect((await api(`/project/tickets?${cond('project/id = 11 and lastUpdated > [2020-01-01T00:00:00Z]')}`)).status).toBe(200);
  });
});

describe('retried ConnectWise writes land once', () => {
  it('a service-ticket create that never landed is sent by the retry: one ticket', async () => {
    const d = draft({ summary: 'Low disk space on CONTOSO-FS01' });
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/service/tickets' });
    await expect(cw.createTicket(ctx(), d)).rejects.toBeInstanceOf(VendorHttpError);
    // Reconcile queries only recognised fields, so a miss is a clean null, not a 400.
    const found = await cw.findTicketByMarker(ctx(), d.marker);
    expect(found).toBeNull();
    await cw.createTicket(ctx(), d);
    expect(sim.list(INSTANCE, 'tickets').filter((t) => t.externalXRef === d.marker)).toHaveLength(1);
  });

  it('a service-ticket create whose answer was lost is found by the retry: one ticket', async () => {
    const d = draft({ summary: 'Backup job failed on CONTOSO-SQL01' });
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/service/tickets', afterHandler: 'drop' });
    await expect(cw.createTicket(ctx(), d)).rejects.toBeInstanceOf(VendorHttpError);
    const found = await cw.findTicketByMarker(ctx(), d.marker);
    const result = found ?? (await cw.createTicket(ctx(), d));
    const made = sim.list(INSTANCE, 'tickets').filter((t) => t.externalXRef === d.marker);
    expect(made).toHaveLength(1);
    expect(result.ticketRef).toBe(String(made[0].id));
  });
});
