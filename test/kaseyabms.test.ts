/**
 * Kaseya BMS end to end on sandbox-gamma, over REST, MCP and GraphQL, against the BMS simulator: the
 * lists, a ticket create previewed and committed once per key, a note, a close, time, a recurring-service
 * add preview, events after a change the MSP makes in BMS, and a signed webhook delivery of one.
 */
import type { KaseyaBmsSimulator } from '../src/simulators/kaseyabms/simulator';
import { startTestService, type TestService } from './support/service';
import { startWebhookReceiver } from './support/webhook-deliveries';

let svc: TestService;
let bms: KaseyaBmsSimulator;
const GAMMA = 'sandbox-gamma';
const gamma = (path: string) => `/tenants/${svc.gammaId}${path}`;
let keySeq = 0;
const newKey = () => `bms-${Date.now()}-${keySeq++}`;

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  svc.services.webhooks.retryScale = 0.0001;
  bms = svc.services.simulators!.kaseyabms as KaseyaBmsSimulator;
}, 120_000);
afterAll(async () => { await svc?.close(); });

async function mcp(name: string, args: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${svc.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': svc.key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json() as any;
  expect(body.result.isError).toBeFalsy();
  return body.result.structuredContent ?? JSON.parse(body.result.content[0].text);
}

const ticketsAtBms = () => bms.list(GAMMA, 'tickets');
const openTicket = () => ticketsAtBms().find((t) => t.StatusId === 2)!;

describe('lists', () => {
  it('tickets over REST, MCP and GraphQL carry the BMS payload and the canonical fields', async () => {
    const rest = await svc.api(gamma('/tickets?limit=500'));
    expect(rest.status).toBe(200);
    const t = openTicket();
    const row = rest.body.tickets.find((x: any) => x.source_id === String(t.Id));
    expect(row).toMatchObject({ summary: t.Title, status: 'in_progress', company_name: t.AccountName, vendor: { connector: 'kaseyabms', native_id: String(t.Id) } });
    expect(rest.body.tickets.filter((x: any) => x.status === 'closed').map((x: any) => x.source_id).sort())
      .toEqual(ticketsAtBms().filter((x) => x.StatusId >= 5).map((x) => String(x.Id)).sort());
    const viaMcp = await mcp('list_tickets', { tenant_id: svc.gammaId, limit: 500 });
    expect(viaMcp.tickets.map((x: any) => x.source_id).sort()).toEqual(rest.body.tickets.map((x: any) => x.source_id).sort());
    const gql = await svc.graphql('query($t: ID!) { list_tickets(tenant_id: $t, limit: 500) { tickets { source_id summary } } }', { t: svc.gammaId });
    expect(gql.data.list_tickets.tickets).toHaveLength(rest.body.tickets.length);
  });

  it('contacts, members, boards, statuses, priorities, agreements and projects come from BMS', async () => {
    const count = async (list: string) => (await svc.api(gamma(`/${list}?limit=500`))).body[list];
    expect((await count('contacts')).length).toBe(bms.list(GAMMA, 'contacts').length);
    expect((await count('members')).map((m: any) => m.display_name)).toContain('Priya Raman');
    const agreements = await count('agreements');
    expect(agreements.find((a: any) => a.source_id === '801')).toMatchObject({ status: 'active', company_source_id: '201', billing_cycle: 'monthly' });
    expect((await count('projects')).length).toBe(2);
  });
});

describe('ticket writes', () => {
  const body = (summary: string) => ({ company_name: 'Lakeside Veterinary Clinic', summary, priority: 'high' });

  it('a preview sends nothing; a commit lands once and a replay answers the first commit', async () => {
    const before = ticketsAtBms().length;
    const preview = await svc.api(gamma('/tickets'), { method: 'POST', json: body('Reception PC will not boot') });
    expect(preview.status).toBe(200);
    const requests = preview.body.preview.targets[0].requests;
    expect(requests.map((r: any) => `${r.method} ${r.path}`)).toEqual(['GET /v2/crm/accounts/202/locations/lookup', 'POST /v2/servicedesk/tickets']);
    expect(requests[1].body).toMatchObject({ Title: 'Reception PC will not boot', AccountId: 202, PriorityId: 3 });
    expect(ticketsAtBms()).toHaveLength(before);

    const key = newKey();
    const commit = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Reception PC will not boot'), dry_run: false, idempotency_key: key } });
    expect(commit.status).toBe(201);
    const made = bms.get(GAMMA, 'tickets', Number(commit.body.ticket_ref))!;
    expect(made).toMatchObject({ Title: 'Reception PC will not boot', AccountId: 202, PriorityId: 3, LocationId: expect.any(Number) });
    expect(made.Details).toContain('[ref:');
    const replay = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Reception PC will not boot'), dry_run: false, idempotency_key: key } });
    expect(replay.body.ticket_ref).toBe(commit.body.ticket_ref);
    expect(ticketsAtBms()).toHaveLength(before + 1);
  });

  it('a note, time and a close land on a ticket this service created', async () => {
    const made = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Mailbox full'), dry_run: false, idempotency_key: newKey() } });
    expect(made.status).toBe(201);
    const ref = String(made.body.ticket_ref);
    const t = bms.get(GAMMA, 'tickets', Number(ref))!;
    const notesBefore = bms.list(GAMMA, 'notes').filter((n) => n.TicketId === t.Id).length;
    const note = await svc.api(gamma('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'note', note: { text: 'Called the customer.' }, dry_run: false, idempotency_key: newKey() } });
    expect(note.status).toBe(201);
    expect(bms.list(GAMMA, 'notes').filter((n) => n.TicketId === t.Id)).toHaveLength(notesBefore + 1);

    const time = await svc.api(`/tenants/${svc.gammaId}/time-entries`, { method: 'POST', json: { ticket_ref: ref, hours: 1.25, billable: true, member: '12', dry_run: false, idempotency_key: newKey() } });
    expect(time.status).toBe(201);
    const entry = bms.list(GAMMA, 'timelogs').filter((e) => e.TicketId === t.Id).pop()!;
    expect(entry).toMatchObject({ Timespent: 1.25, UserId: 12 });

    const close = await svc.api(gamma('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'close', evidence: 'Replaced the switch.', dry_run: false, idempotency_key: newKey() } });
    expect([200, 201]).toContain(close.status);
    expect(bms.get(GAMMA, 'tickets', t.Id)!.CompletedDate).not.toBeNull();
  });

  it('time of more hours than any date before now can hold is a 422 naming hours, and nothing is sent', async () => {
    const made = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Clock far back'), dry_run: false, idempotency_key: newKey() } });
    expect(made.status).toBe(201);
    const ref = String(made.body.ticket_ref);
    const before = bms.list(GAMMA, 'timelogs').length;
    const res = await svc.api(gamma('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours: 1e10, billable: true, member: '12', dry_run: false, idempotency_key: newKey() } });
    expect(res.status).toBe(422);
    expect(res.body.details.field).toBe('hours');
    expect(bms.list(GAMMA, 'timelogs')).toHaveLength(before);
  });

  it('a note whose answer is lost, on a ticket past one page of notes, is found again by its marker: one note, reconciled', async () => {
    const made = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Many notes'), dry_run: false, idempotency_key: newKey() } });
    expect(made.status).toBe(201);
    const ref = String(made.body.ticket_ref);
    // 60 notes straight at BMS (its default page is 50).
    const base = `${svc.url}/sandbox-vendors/kaseyabms`;
    const form = new FormData();
    for (const [k, v] of Object.entries({ GrantType: 'password', UserName: 'sandbox', Password: 'sandbox-secret', Tenant: 'SANDBOX-GAMMA' })) form.append(k, v);
    const token = ((await (await fetch(`${base}/v2/security/authenticate`, { method: 'POST', body: form })).json()) as any).Result.AccessToken;
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${base}/v2/servicedesk/tickets/${ref}/notes`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ Details: `Earlier note ${i}`, IsInternal: false, TypeId: 1, NoteDate: '2026-11-20T09:00:00Z' }),
      });
      expect(((await res.json()) as any).Success).toBe(true);
    }
    const notes = () => bms.list(GAMMA, 'notes').filter((n) => n.TicketId === Number(ref));
    const before = notes().length;
    expect(before).toBeGreaterThanOrEqual(60);
    const control = (spec?: unknown) => fetch(`${base}/_control/faults`, {
      method: spec ? 'POST' : 'DELETE', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, ...(spec ? { body: JSON.stringify(spec) } : {}) });
    expect((await control({ status: 200, times: 1, pathIncludes: `/tickets/${ref}/notes`, method: 'POST', afterHandler: 'drop' })).status).toBe(204);
    try {
      const res = await svc.api(gamma('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'note', note: { text: 'Answer lost on the way back.' }, dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(res.body.reconciled).toBe(true);
      expect(notes()).toHaveLength(before + 1);
      expect(notes().filter((n) => String(n.Details).startsWith('Answer lost on the way back.'))).toHaveLength(1);
    } finally { await control(); }
  }, 60_000);

  it('GraphQL creates the same way, and a refusal in BMS\'s envelope is a 422 naming the field', async () => {
    const gql = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key },
      body: JSON.stringify({ query: 'mutation($t: ID!, $i: CreateTicketBody!) { create_ticket(tenant_id: $t, input: $i) { __typename } }',
        variables: { t: svc.gammaId, i: { ...body('Scanner offline'), dry_run: false, idempotency_key: newKey() } } }),
    });
    const res = await gql.json() as any;
    expect(res.errors).toBeUndefined();
    expect(ticketsAtBms().some((t) => t.Title === 'Scanner offline')).toBe(true);
    const bad = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...body('Bad queue'), vendor_native: { SourceId: 99 }, dry_run: false, idempotency_key: newKey() } });
    expect(bad.status).toBe(422);
  });
});

describe('agreement lines', () => {
  it('an add previews the recurring service and sends nothing; a rewrite names no synced line', async () => {
    const res = await svc.api(gamma('/agreements/801/lines'), { method: 'POST', json: { verb: 'add', product_source_id: '33', quantity: 5, unit_price: 26.4, effective_date: '2026-12-01' } });
    expect(res.status).toBe(200);
    const [request] = res.body.preview.targets?.[0]?.requests ?? res.body.preview.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v2/finance/contracts/recurringservices/801/services', body: [{ ServiceId: 33, Units: 5, UnitPrice: 26.4 }] });
    expect(bms.list(GAMMA, 'recurring_services')).toHaveLength(0);
    const rewrite = await svc.api(gamma('/agreements/801/lines'), { method: 'POST', json: { verb: 'rewrite', line_source_id: '1', quantity: 6 } });
    // BMS API 2.0 reads no recurring service back, so no line is ever synced to rewrite or end.
    expect(rewrite.status).toBe(422);
    expect(rewrite.body.details.field).toBe('line_source_id');
  });

  it('an add of more units than BMS\'s int32 holds is refused naming quantity, and nothing is sent', async () => {
    const res = await svc.api(gamma('/agreements/801/lines'), {
      method: 'POST', json: { verb: 'add', product_source_id: '33', quantity: 2_147_483_648, unit_price: 26.4, effective_date: '2026-12-01', dry_run: false, idempotency_key: newKey() },
    });
    expect(res.status).toBe(422);
    expect(res.body.details.field).toBe('quantity');
    expect(bms.list(GAMMA, 'recurring_services')).toHaveLength(0);
  });
});

describe('project writes', () => {
  it('a note or an item on a BMS project is 501 not_supported saying why, over REST and GraphQL, and nothing is sent', async () => {
    const project = bms.list(GAMMA, 'projects')[0];
    const state = () => JSON.stringify(['projects', 'tickets', 'notes'].map((r) => bms.list(GAMMA, r as 'projects')));
    const before = state();
    for (const [path, json] of [['notes', { text: 'Cut-over on Saturday' }], ['items', { summary: 'Migrate the file server' }]] as const) {
      const res = await svc.api(gamma(`/projects/${project.Id}/${path}`), { method: 'POST', json: { ...json, dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(501);
      expect(res.body.code).toBe('not_supported');
      expect(res.body.message).toMatch(/POST \/v2\/project\/tasks is GetTasksList/);
    }
    const gql = await isvGraphql('mutation($t: ID!, $p: ID!, $i: ProjectNoteBody!) { add_project_note(tenant_id: $t, project_source_id: $p, input: $i) { __typename } }',
      { t: svc.gammaId, p: String(project.Id), i: { text: 'Cut-over on Saturday', dry_run: false, idempotency_key: newKey() } });
    expect(gql.errors?.[0]?.extensions?.code).toBe('not_supported');
    expect(state()).toBe(before);
  });
});

describe('events and webhooks', () => {
  it('a change the MSP makes in BMS gives ticket events after the sync, and a webhook delivers one', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hook = await svc.api(gamma('/ticket-events/webhook'), { method: 'POST', json: { url: `${receiver.url}/bms` } });
      expect(hook.status).toBe(201);
      const sim = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.gammaId, change: { kind: 'ticket_status' } } });
      expect(sim.status).toBe(200);
      const target = sim.body.target_id;
      const events = (await svc.api(gamma('/connections/events?limit=500'))).body.events.filter((e: any) => e.vendor === 'kaseyabms' && e.vendor_id === target);
      expect(events.map((e: any) => e.kind)).toContain('ticket.updated');
      const delivered = () => receiver.received.some((r) => JSON.stringify(r.body).includes(target));
      for (let i = 0; i < 100 && !delivered(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(delivered()).toBe(true);
      const gql = await isvGraphql('query($t: ID!) { list_events(tenant_id: $t, kind: "ticket", limit: 500) { events { kind subject_ref } } }', { t: svc.gammaId });
      expect(gql.errors).toBeUndefined();
      expect(gql.data.list_events.events.some((e: any) => e.kind === 'ticket.updated')).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});

/** The ISV's key on the graph (the writes are the ISV's role). */
async function isvGraphql(query: string, variables: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key }, body: JSON.stringify({ query, variables }) });
  return res.json();
}

describe('the same writes over GraphQL and MCP', () => {
  const ticketBody = (summary: string) => ({ company_name: 'Lakeside Veterinary Clinic', summary, priority: 'high' });
  it('GraphQL: a note, time and a close on a created ticket, and an agreement-line add preview that sends nothing', async () => {
    const made = await svc.api(gamma('/tickets'), { method: 'POST', json: { ...ticketBody('Printer jam (GraphQL)'), dry_run: false, idempotency_key: newKey() } });
    expect(made.status).toBe(201);
    const ref = String(made.body.ticket_ref);
    const t = bms.get(GAMMA, 'tickets', Number(ref))!;
    const write = (input: Record<string, unknown>) => isvGraphql(
      'mutation($t: ID!, $i: TicketWriteBody!) { write_ticket(tenant_id: $t, input: $i) { __typename ... on TicketWriteResult { action created } } }', { t: svc.gammaId, i: input });
    const notes = () => bms.list(GAMMA, 'notes').filter((n) => n.TicketId === t.Id).length;
    const notesBefore = notes();
    const note = await write({ ticket_ref: ref, action: 'note', note: { text: 'Ordered a fuser.' }, dry_run: false, idempotency_key: newKey() });
    expect(note.errors).toBeUndefined();
    expect(note.data.write_ticket).toMatchObject({ __typename: 'TicketWriteResult', action: 'note', created: true });
    expect(notes()).toBe(notesBefore + 1);

    const time = await isvGraphql('mutation($t: ID!, $i: CreateTimeEntryBody!) { create_time_entry(tenant_id: $t, input: $i) { __typename ... on TimeEntryResult { hours } } }',
      { t: svc.gammaId, i: { ticket_ref: ref, hours: 0.5, billable: true, member: '12', dry_run: false, idempotency_key: newKey() } });
    expect(time.errors).toBeUndefined();
    expect(time.data.create_time_entry).toMatchObject({ __typename: 'TimeEntryResult', hours: 0.5 });
    expect(bms.list(GAMMA, 'timelogs').filter((e) => e.TicketId === t.Id).pop()).toMatchObject({ Timespent: 0.5, UserId: 12 });

    const close = await write({ ticket_ref: ref, action: 'close', evidence: 'Fuser replaced.', dry_run: false, idempotency_key: newKey() });
    expect(close.errors).toBeUndefined();
    expect(bms.get(GAMMA, 'tickets', t.Id)!.CompletedDate).not.toBeNull();

    const line = await isvGraphql('mutation($t: ID!, $a: ID!, $i: AgreementLinesBody!) { write_agreement_lines(tenant_id: $t, agreement_source_id: $a, input: $i) { __typename ... on AgreementLinesPreview { verb dry_run } } }',
      { t: svc.gammaId, a: '801', i: { verb: 'add', product_source_id: '33', quantity: 2, unit_price: 26.4, effective_date: '2026-12-01' } });
    expect(line.errors).toBeUndefined();
    expect(line.data.write_agreement_lines).toMatchObject({ __typename: 'AgreementLinesPreview', verb: 'add', dry_run: true });
    expect(bms.list(GAMMA, 'recurring_services')).toHaveLength(0);
  });

  it('MCP: a finding routed to a BMS ticket is previewed, committed once, and a replay answers the first commit', async () => {
    const before = ticketsAtBms().length;
    const finding = { tenant_id: svc.gammaId, kind: 'technical', title: 'Backup job failed three nights running', severity: 'high', company_name: 'Lakeside Veterinary Clinic', idempotency_key: newKey() };
    const preview = await mcp('route_finding', finding);
    expect(preview.dry_run).toBe(true);
    expect(ticketsAtBms()).toHaveLength(before);
    const first = await mcp('route_finding', { ...finding, dry_run: false });
    const again = await mcp('route_finding', { ...finding, dry_run: false });
    expect(first.idempotent_replay).toBe(false);
    expect(again.idempotent_replay).toBe(true);
    expect(ticketsAtBms()).toHaveLength(before + 1);
    expect(ticketsAtBms().filter((t) => t.Title === finding.title)).toHaveLength(1);
  });
});
