/**
 * Projects over HTTP against the simulators (interface document rule 9, docs/architecture.md, Projects): the
 * store-served list with its baseline flag; the header create refused; notes and items on existing
 * projects through the one write skeleton on ConnectWise (sandbox-alpha), Autotask (a tenant made
 * with create_connection) and the limited connector (HaloPSA, sandbox-beta, its fixture host). Every
 * case compares the simulator's state before and after: a preview or a refusal changes nothing, a
 * commit adds exactly one record, a replay or a retried send adds nothing more.
 */
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: any;
let at: any;
let halo: any;
let atTenant: string;

let keySeq = 0;
const newKey = () => `pkey-${Date.now()}-${keySeq++}`;
const alpha = (path: string) => `/tenants/${svc.alphaId}${path}`;
const beta = (path: string) => `/tenants/${svc.betaId}${path}`;
const atPath = (path: string) => `/tenants/${atTenant}${path}`;

/** The vendor records a project write can add, per simulator. */
const cwState = () => JSON.stringify({ notes: cw.list('sandbox-alpha', 'project_notes'), tickets: cw.list('sandbox-alpha', 'project_tickets'), projects: cw.list('sandbox-alpha', 'projects') });
const atState = () => JSON.stringify({ notes: at.list('autotask-demo', 'ProjectNotes'), tasks: at.list('autotask-demo', 'Tasks'), projects: at.list('autotask-demo', 'Projects') });
const haloState = () => JSON.stringify({ actions: halo.list('sandbox-beta', 'actions'), projects: halo.list('sandbox-beta', 'projects') });

async function fault(vendor: string, spec: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, body: JSON.stringify(spec),
  });
  expect(res.status).toBe(204);
}
const clearFaults = (vendor: string) =>
  fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.config.adminToken}` } });

beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise;
  at = svc.services.simulators!.autotask;
  halo = svc.services.simulators!.halopsa;

  // An Autotask MSP, as an admin sets one up: tenant, connection, the ISV's grants, a sync.
  const fixtures = loadVendorFixtures('autotask-demo', 'autotask');
  at.seed('autotask-demo', fixtures.resources);
  const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
  const t = await svc.graphql('mutation { create_tenant(name: "Autotask Projects MSP", slug: "autotask-projects") { id } }');
  atTenant = t.data.create_tenant.id;
  const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
    input: { tenant_id: atTenant, kind: 'psa', connector: 'autotask', base_url: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
      credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
      status_mapping: Object.entries(fixtures.statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })) },
  });
  await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create","psa.project.write"]) { id } }', { i: isv, c: c.data.create_connection.id });
  expect((await svc.api(atPath('/sync'), { method: 'POST', json: {} })).body.ok).toBe(true);
}, 120_000);
afterAll(async () => { await svc?.close(); });

const cwProject = (pred: (p: any) => boolean) => (cw.list('sandbox-alpha', 'projects') as any[]).find(pred);
const cwWritable = () => cwProject((p) => p.id === 12); // SharePoint Online Migration (Fabrikam): phases 203 Planning (closed), 204 Execution
const cwBaseline = () => cwProject((p) => p.type?.name === 'Baseline');

describe('GET /tenants/{t}/projects', () => {
  it('serves the synced projects with the baseline flag, company and status, vendor and raw alike', async () => {
    const res = await svc.api(alpha('/projects?limit=500'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sandbox: true, served_from: 'store', next_cursor: null });
    expect(typeof res.body.last_synced_at).toBe('string');
    const byId = new Map(res.body.projects.map((p: any) => [p.source_id, p]));
    expect(byId.size).toBe((cw.list('sandbox-alpha', 'projects') as any[]).length);
    const baseline: any = byId.get(String(cwBaseline().id));
    expect(baseline).toMatchObject({ baseline: true, company_name: cwBaseline().company.name, company_source_id: String(cwBaseline().company.id), status: 'In Progress' });
    expect(baseline.raw).toEqual(baseline.vendor.native);
    expect(baseline.vendor).toMatchObject({ connector: 'connectwise', native_id: String(cwBaseline().id) });
    expect([...byId.values()].filter((p: any) => p.baseline)).toHaveLength(1);

    // Autotask: the Baseline project type; HaloPSA: the locked project.
    const atList = (await svc.api(atPath('/projects?limit=500'))).body.projects;
    expect(atList.filter((p: any) => p.baseline).map((p: any) => p.source_id)).toEqual(['29685004']);
    const haloList = (await svc.api(beta('/projects'))).body.projects;
    expect(haloList.filter((p: any) => p.baseline).map((p: any) => p.source_id)).toEqual(['953']);
  });

  it('pages with next_cursor, complete and disjoint', async () => {
    const first = await svc.api(alpha('/projects?limit=2'));
    expect(first.body.projects).toHaveLength(2);
    const second = await svc.api(alpha(`/projects?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`));
    const ids = [...first.body.projects, ...second.body.projects].map((p: any) => p.source_id);
    expect(new Set(ids).size).toBe(4);
  });
});

describe('POST /tenants/{t}/projects (header create)', () => {
  it('is refused with 422 project_header_not_supported, preview or commit, and creates nothing', async () => {
    const before = cwState();
    for (const body of [{ name: 'New project', company_name: 'Contoso Ltd' }, { name: 'New project', company_name: 'Contoso Ltd', dry_run: false, idempotency_key: newKey() }]) {
      const res = await svc.api(alpha('/projects'), { method: 'POST', json: body });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('project_header_not_supported');
    }
    // The body is declared: an undeclared property is a request-schema failure.
    const odd = await svc.api(alpha('/projects'), { method: 'POST', json: { name: 'x', company_name: 'y', phases: [] } });
    expect(odd.status).toBe(422);
    expect(odd.body.detail).toBeDefined();
    expect(cwState()).toBe(before);
  });
});

describe('ConnectWise: project notes', () => {
  it('a preview shows the exact request and changes nothing; a commit adds one note; a replay adds nothing', async () => {
    const p = cwWritable();
    const body = { text: 'Cut-over window agreed for Saturday', idempotency_key: newKey() };
    const before = cwState();
    const preview = await svc.api(alpha(`/projects/${p.id}/notes`), { method: 'POST', json: body });
    expect(preview.status).toBe(200);
    const [request] = preview.body.preview.targets[0].requests;
    expect(request).toMatchObject({ method: 'POST', path: `/project/projects/${p.id}/notes` });
    expect(request.body.text).toMatch(/^Cut-over window agreed for Saturday\n\n\[ref:msp-[0-9a-f]{24}\]$/);
    expect(cwState()).toBe(before);

    const notes = () => (cw.list('sandbox-alpha', 'project_notes') as any[]).filter((n) => n.projectId === p.id);
    const count = notes().length;
    const commit = await svc.api(alpha(`/projects/${p.id}/notes`), { method: 'POST', json: { ...body, dry_run: false } });
    expect(commit.status).toBe(201);
    expect(commit.body).toMatchObject({ dry_run: false, created: true, idempotent_replay: false, connector: 'connectwise', project_source_id: String(p.id), reconciled: false });
    expect(notes()).toHaveLength(count + 1);
    const note = notes().find((n) => String(n.id) === commit.body.note_ref);
    expect(note.text).toBe(request.body.text); // the preview showed what the commit sent

    const replay = await svc.api(alpha(`/projects/${p.id}/notes`), { method: 'POST', json: { ...body, dry_run: false } });
    expect(replay.status).toBe(201);
    expect(replay.body).toMatchObject({ idempotent_replay: true, note_ref: commit.body.note_ref });
    expect(notes()).toHaveLength(count + 1);
  }, 60_000);

  it('a commit needs an idempotency_key (422 HTTPValidationError) and writes nothing', async () => {
    const before = cwState();
    const res = await svc.api(alpha(`/projects/${cwWritable().id}/notes`), { method: 'POST', json: { text: 'x', dry_run: false } });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.detail)).toContain('idempotency_key');
    expect(cwState()).toBe(before);
  });

  it('429 twice then success writes one note; an answer lost after the vendor wrote is reconciled by its marker', async () => {
    const p = cwWritable();
    const notes = () => (cw.list('sandbox-alpha', 'project_notes') as any[]).filter((n) => n.projectId === p.id);
    let count = notes().length;
    await fault('connectwise', { status: 429, times: 2, retryAfterSeconds: 1, pathIncludes: `/project/projects/${p.id}/notes`, method: 'POST' });
    try {
      const res = await svc.api(alpha(`/projects/${p.id}/notes`), { method: 'POST', json: { text: 'Throttled project note', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(notes()).toHaveLength(count + 1);
    } finally { await clearFaults('connectwise'); }

    count = notes().length;
    await fault('connectwise', { status: 200, times: 1, pathIncludes: `/project/projects/${p.id}/notes`, method: 'POST', afterHandler: 'drop' });
    try {
      const res = await svc.api(alpha(`/projects/${p.id}/notes`), { method: 'POST', json: { text: 'Answer lost on a project note', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(res.body.reconciled).toBe(true);
      expect(notes()).toHaveLength(count + 1);
    } finally { await clearFaults('connectwise'); }
  }, 60_000);
});

describe('ConnectWise: project items (project tickets)', () => {
  const tickets = (projectId: number) => (cw.list('sandbox-alpha', 'project_tickets') as any[]).filter((t) => t.project?.id === projectId);

  it('a preview changes nothing; a commit adds one project ticket in the first open phase, marker in an internal note (never the customer-visible description); a replay adds nothing', async () => {
    const p = cwWritable();
    const body = { summary: 'Migrate the Finance site', description: 'Includes the archive library.', idempotency_key: newKey() };
    const before = cwState();
    const preview = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: body });
    expect(preview.status).toBe(200);
    expect(preview.body.item_kind).toBe('project_ticket');
    const post = preview.body.preview.targets[0].requests.find((r: any) => r.method === 'POST');
    expect(post.path).toBe('/project/tickets');
    expect(post.body.externalXRef).toBeUndefined(); // ProjectTicket has no externalXRef
    expect(post.body.initialDescription).toBe('Includes the archive library.');
    expect(post.body.initialInternalAnalysis).toMatch(/^\[ref:msp-[0-9a-f]{24}\]$/);
    expect(cwState()).toBe(before);

    const count = tickets(p.id).length;
    const commit = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { ...body, dry_run: false } });
    expect(commit.status).toBe(201);
    expect(commit.body).toMatchObject({ created: true, item_kind: 'project_ticket', connector: 'connectwise', reconciled: false });
    expect(commit.body.ticket_ref).toBe(commit.body.item_ref);
    expect(tickets(p.id)).toHaveLength(count + 1);
    const created = tickets(p.id).find((t) => String(t.id) === commit.body.item_ref);
    expect(created).toMatchObject({ summary: 'Migrate the Finance site', phase: { id: 204 } });
    const notesOf = (cw.list('sandbox-alpha', 'project_ticket_notes') as any[]).filter((n) => n.ticketId === created.id);
    // The customer sees the detail description: the caller's text only. The marker is internal.
    expect(notesOf.filter((n) => n.detailDescriptionFlag).map((n) => n.text)).toEqual(['Includes the archive library.']);
    expect(notesOf.filter((n) => n.internalAnalysisFlag).map((n) => n.text)).toEqual([post.body.initialInternalAnalysis]);

    const replay = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { ...body, dry_run: false } });
    expect(replay.body).toMatchObject({ idempotent_replay: true, item_ref: commit.body.item_ref });
    expect(tickets(p.id)).toHaveLength(count + 1);
  }, 60_000);

  it('the phase is chosen by name or id; a phase the project lacks is a 422 on phase that writes nothing', async () => {
    const p = cwWritable();
    const byName = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'Plan the cut-over', phase: 'planning', dry_run: false, idempotency_key: newKey() } });
    expect(byName.status).toBe(201);
    expect(tickets(p.id).find((t) => String(t.id) === byName.body.item_ref).phase.id).toBe(203);
    const byId = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'Run the cut-over', phase: '204', dry_run: false, idempotency_key: newKey() } });
    expect(tickets(p.id).find((t) => String(t.id) === byId.body.item_ref).phase.id).toBe(204);

    const before = cwState();
    // Phase 205 belongs to another project.
    for (const phase of ['Closing', '205']) {
      const res = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'x', phase, dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation', details: { field: 'phase' } });
    }
    const long = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'y'.repeat(101) } });
    expect(long.status).toBe(422);
    expect(long.body.details.field).toBe('summary');
    expect(cwState()).toBe(before);
  }, 60_000);

  it('429 twice then success writes one project ticket; a lost answer is reconciled by the marker line', async () => {
    const p = cwWritable();
    let count = tickets(p.id).length;
    await fault('connectwise', { status: 429, times: 2, retryAfterSeconds: 1, pathIncludes: '/project/tickets', method: 'POST' });
    try {
      const res = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'Throttled item', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(tickets(p.id)).toHaveLength(count + 1);
    } finally { await clearFaults('connectwise'); }

    count = tickets(p.id).length;
    await fault('connectwise', { status: 200, times: 1, pathIncludes: '/project/tickets', method: 'POST', afterHandler: 'drop' });
    try {
      const res = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'Throttled item', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(res.body.reconciled).toBe(true);
      // Same summary as the earlier item: the marker line, not the summary, finds the right one.
      expect(tickets(p.id)).toHaveLength(count + 1);
    } finally { await clearFaults('connectwise'); }
  }, 60_000);
});

describe('ConnectWise: refusals write nothing', () => {
  it('a baseline project is 409 project_not_writable for notes and items, preview or commit', async () => {
    const before = cwState();
    const id = cwBaseline().id;
    for (const [path, body] of [['notes', { text: 'x' }], ['items', { summary: 'x' }]] as const) {
      for (const extra of [{}, { dry_run: false, idempotency_key: newKey() }]) {
        const res = await svc.api(alpha(`/projects/${id}/${path}`), { method: 'POST', json: { ...body, ...extra } });
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('project_not_writable');
      }
    }
    expect(cwState()).toBe(before);
  });

  it('the simulator refuses a note or ticket on the baseline project itself, in ConnectWise\'s error shape', async () => {
    const base = `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`;
    const conn = (await svc.services.ds.query("SELECT credentials_encrypted FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0];
    const creds = svc.services.box.openJson<Record<string, string>>(conn.credentials_encrypted);
    const headers = { 'content-type': 'application/json', clientId: creds.clientId, authorization: `Basic ${Buffer.from(`${creds.companyId}+${creds.publicKey}:${creds.privateKey}`).toString('base64')}` };
    const before = cwState();
    const note = await fetch(`${base}/project/projects/${cwBaseline().id}/notes`, { method: 'POST', headers, body: JSON.stringify({ text: 'x' }) });
    expect(note.status).toBe(400);
    expect(await note.json()).toMatchObject({ code: 'InvalidObject', errors: [{ field: 'project' }] });
    const ticket = await fetch(`${base}/project/tickets`, { method: 'POST', headers, body: JSON.stringify({ summary: 'x', phase: { id: 202 } }) });
    expect(ticket.status).toBe(400);
    const noPhase = await fetch(`${base}/project/tickets`, { method: 'POST', headers, body: JSON.stringify({ summary: 'x' }) });
    expect(await noPhase.json()).toMatchObject({ code: 'InvalidObject', errors: [{ code: 'Required', field: 'phase' }] });
    expect(cwState()).toBe(before);
  });

  it('an unknown project is 404 project_requires_existing, whatever the id string', async () => {
    const before = cwState();
    for (const id of ['999999', 'not-a-project', 'x'.repeat(300), '\u0000', '12 OR 1=1', '../12']) {
      for (const [path, body] of [['notes', { text: 'x' }], ['items', { summary: 'x' }]] as const) {
        const res = await svc.api(alpha(`/projects/${encodeURIComponent(id)}/${path}`), { method: 'POST', json: body });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('project_requires_existing');
      }
    }
    expect(cwState()).toBe(before);
  });

  it('an item naming another company is 409 project_company_cannot_update; the project\'s own company is fine', async () => {
    const p = cwWritable();
    const before = cwState();
    const other = (cw.list('sandbox-alpha', 'companies') as any[]).find((c) => c.id !== p.company.id).name;
    for (const extra of [{}, { dry_run: false, idempotency_key: newKey() }]) {
      const res = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'x', company_name: other, ...extra } });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('project_company_cannot_update');
    }
    expect(cwState()).toBe(before);
    const same = await svc.api(alpha(`/projects/${p.id}/items`), { method: 'POST', json: { summary: 'x', company_name: p.company.name } });
    expect(same.status).toBe(200);
  });

  it('without psa.project.write on the connection: 403 grant_missing with needed', async () => {
    const isvId = (await svc.graphql('mutation { create_isv(name: "No Projects ISV") { id } }')).data.create_isv.id;
    const key = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id) { key } }', { id: isvId })).data.issue_api_key.key;
    const connId = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0].id;
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isvId, c: connId });
    const before = cwState();
    for (const [path, body] of [['notes', { text: 'x', dry_run: false, idempotency_key: newKey() }], ['items', { summary: 'x' }]] as const) {
      const res = await svc.api(alpha(`/projects/${cwWritable().id}/${path}`), { method: 'POST', key, json: body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'grant_missing', needed: 'psa.project.write', details: { needed: 'psa.project.write' } });
    }
    expect(cwState()).toBe(before);
  });

  it('an MSP key is refused with role_required', async () => {
    const res = await svc.api(alpha(`/projects/${cwWritable().id}/notes`), { method: 'POST', key: svc.alphaMspKey, json: { text: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('role_required');
  });
});

describe('Autotask: project notes and tasks', () => {
  const writable = () => at.get('autotask-demo', 'Projects', 29685001);
  const notes = () => (at.list('autotask-demo', 'ProjectNotes') as any[]).filter((n) => n.projectID === 29685001);
  const tasks = () => (at.list('autotask-demo', 'Tasks') as any[]).filter((t) => t.projectID === 29685001);

  it('a note: preview changes nothing, commit adds one ProjectNotes row with the marker line, replay adds nothing', async () => {
    const body = { text: 'Licences assigned for the pilot group', idempotency_key: newKey() };
    const before = atState();
    const preview = await svc.api(atPath('/projects/29685001/notes'), { method: 'POST', json: body });
    expect(preview.status).toBe(200);
    const [picklists, request] = preview.body.preview.targets[0].requests;
    // noteType and publish are the database's picklist values, read at commit (their ids differ per database).
    expect(picklists).toMatchObject({ method: 'GET', path: '/ProjectNotes/entityInformation/fields' });
    expect(request).toMatchObject({
      method: 'POST', path: '/Projects/29685001/Notes',
      body: { projectID: 29685001, title: 'Licences assigned for the pilot group', noteType: expect.stringContaining('resolved at commit'), publish: expect.stringContaining('resolved at commit') },
    });
    expect(atState()).toBe(before);

    const commit = await svc.api(atPath('/projects/29685001/notes'), { method: 'POST', json: { ...body, dry_run: false } });
    expect(commit.status).toBe(201);
    expect(notes()).toHaveLength(1);
    expect(notes()[0].description).toBe(request.body.description);
    // The sandbox database's "Project Notes" type and "All Autotask Users" publish value.
    expect(notes()[0]).toMatchObject({ noteType: 13, publish: 4 });
    const replay = await svc.api(atPath('/projects/29685001/notes'), { method: 'POST', json: { ...body, dry_run: false } });
    expect(replay.body.idempotent_replay).toBe(true);
    expect(notes()).toHaveLength(1);
  }, 60_000);

  it('an item is a task with the marker in externalID: preview changes nothing, commit adds one, replay adds nothing', async () => {
    const body = { summary: 'Migrate shared mailboxes', description: 'Batch 2', idempotency_key: newKey() };
    const before = atState();
    const preview = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: body });
    expect(preview.status).toBe(200);
    expect(preview.body.item_kind).toBe('task');
    const [picklists, request] = preview.body.preview.targets[0].requests;
    expect(picklists).toMatchObject({ method: 'GET', path: '/Tasks/entityInformation/fields' });
    expect(request).toMatchObject({
      method: 'POST', path: '/Projects/29685001/Tasks',
      body: { projectID: 29685001, title: 'Migrate shared mailboxes', status: expect.stringContaining('resolved at commit'), taskType: expect.stringContaining('resolved at commit') },
    });
    expect(atState()).toBe(before);

    const count = tasks().length;
    const commit = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { ...body, dry_run: false } });
    expect(commit.status).toBe(201);
    expect(commit.body).toMatchObject({ item_kind: 'task', ticket_ref: null, connector: 'autotask' });
    expect(tasks()).toHaveLength(count + 1);
    // The sandbox database's task status "New" and type "Fixed Work".
    expect(tasks().find((t) => String(t.id) === commit.body.item_ref)).toMatchObject({ title: 'Migrate shared mailboxes', externalID: request.body.externalID, status: 7, taskType: 21 });
    await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { ...body, dry_run: false } });
    expect(tasks()).toHaveLength(count + 1);
  }, 60_000);

  it('429 twice then success writes one task; a lost answer is reconciled by externalID', async () => {
    let count = tasks().length;
    await fault('autotask', { status: 429, times: 2, retryAfterSeconds: 1, pathIncludes: '/Projects/29685001/Tasks', method: 'POST' });
    try {
      const res = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { summary: 'Throttled task', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(tasks()).toHaveLength(count + 1);
    } finally { await clearFaults('autotask'); }
    count = tasks().length;
    await fault('autotask', { status: 200, times: 1, pathIncludes: '/Projects/29685001/Tasks', method: 'POST', afterHandler: 'drop' });
    try {
      const res = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { summary: 'Lost task answer', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(res.body.reconciled).toBe(true);
      expect(tasks()).toHaveLength(count + 1);
    } finally { await clearFaults('autotask'); }
  }, 60_000);

  it('baseline 409, unknown 404, company move 409, a phase that is not an id 422: nothing written', async () => {
    const before = atState();
    const baseline = await svc.api(atPath('/projects/29685004/items'), { method: 'POST', json: { summary: 'x', dry_run: false, idempotency_key: newKey() } });
    expect(baseline.status).toBe(409);
    expect(baseline.body.code).toBe('project_not_writable');
    const unknown = await svc.api(atPath('/projects/1/notes'), { method: 'POST', json: { text: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('project_requires_existing');
    const other = (at.list('autotask-demo', 'Companies') as any[]).find((c) => c.id !== writable().companyID && c.id !== 0).companyName;
    const moved = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { summary: 'x', company_name: other } });
    expect(moved.status).toBe(409);
    expect(moved.body.code).toBe('project_company_cannot_update');
    const phase = await svc.api(atPath('/projects/29685001/items'), { method: 'POST', json: { summary: 'x', phase: 'Execution' } });
    expect(phase.status).toBe(422);
    expect(phase.body.details.field).toBe('phase');
    expect(atState()).toBe(before);
  });

  it('the simulator refuses notes and tasks on a Baseline or Template project in Autotask\'s error shape', async () => {
    const headers = { 'content-type': 'application/json', ApiIntegrationCode: 'SANDBOX', UserName: 'sandbox', Secret: 'sandbox-secret' };
    const base = `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`;
    const template = at.create('autotask-demo', 'Projects', { projectName: 'Onboarding template', companyID: 0, projectType: 2, status: 1 });
    const before = atState();
    for (const id of [29685004, template.id]) {
      const res = await fetch(`${base}/Projects/${id}/Tasks`, { method: 'POST', headers, body: JSON.stringify({ title: 'x', status: 7, taskType: 21 }) });
      expect(res.status).toBe(500);
      expect(((await res.json()) as any).errors[0]).toMatch(/Baseline|Template/);
    }
    const missing = await fetch(`${base}/Projects/29685001/Notes`, { method: 'POST', headers, body: JSON.stringify({ description: 'x' }) });
    expect(missing.status).toBe(500);
    expect(((await missing.json()) as any).errors).toEqual(expect.arrayContaining(['title is required.', 'noteType is required.', 'publish is required.']));
    expect(atState()).toBe(before);

    // The connector reads a Template project as a baseline too: synced, listed and refused by the service.
    expect((await svc.api(atPath('/sync'), { method: 'POST', json: {} })).body.ok).toBe(true);
    const listed = (await svc.api(atPath('/projects?limit=500'))).body.projects.find((p: any) => p.source_id === String(template.id));
    expect(listed.baseline).toBe(true);
    const refused = await svc.api(atPath(`/projects/${template.id}/notes`), { method: 'POST', json: { text: 'x' } });
    expect(refused.body.code).toBe('project_not_writable');
  });
});

describe('the limited PSA connector (HaloPSA on sandbox-beta)', () => {
  it('previews, and commits a project note and an item (a note on the project) on its fixture host; a locked project is 409', async () => {
    const actions = () => (halo.list('sandbox-beta', 'actions') as any[]).filter((a) => String(a.ticket_id) === '950');
    const before = haloState();
    const preview = await svc.api(beta('/projects/950/notes'), { method: 'POST', json: { text: 'Halo project note' } });
    expect(preview.status).toBe(200);
    expect(preview.body.preview.targets[0].requests[0]).toMatchObject({ method: 'POST', path: '/api/Actions' });
    expect(haloState()).toBe(before);

    const count = actions().length;
    const key = newKey();
    const note = await svc.api(beta('/projects/950/notes'), { method: 'POST', json: { text: 'Halo project note', dry_run: false, idempotency_key: key } });
    expect(note.status).toBe(201);
    expect(actions()).toHaveLength(count + 1);
    await svc.api(beta('/projects/950/notes'), { method: 'POST', json: { text: 'Halo project note', dry_run: false, idempotency_key: key } });
    expect(actions()).toHaveLength(count + 1);
    const item = await svc.api(beta('/projects/950/items'), { method: 'POST', json: { summary: 'Halo item', dry_run: false, idempotency_key: newKey() } });
    expect(item.status).toBe(201);
    expect(item.body.item_kind).toBe('project_note');
    expect(actions()).toHaveLength(count + 2);

    const locked = haloState();
    const refused = await svc.api(beta('/projects/953/notes'), { method: 'POST', json: { text: 'x', dry_run: false, idempotency_key: newKey() } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('project_not_writable');
    expect(haloState()).toBe(locked);
  }, 60_000);

  it('on a host that is not its fixture host it previews, and a commit is 501 not_supported that writes nothing', async () => {
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const tenantId = (await svc.graphql('mutation { create_tenant(name: "Halo Projects Prod", slug: "halo-projects-prod") { id } }')).data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenantId, kind: 'psa', connector: 'halopsa', base_url: `${svc.url}/sandbox-vendors/halopsa`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.project.write"]) { id } }', { i: isv, c: c.data.create_connection.id });
    await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
    const before = haloState();
    expect((await svc.api(`/tenants/${tenantId}/projects/950/notes`, { method: 'POST', json: { text: 'x' } })).status).toBe(200);
    const live = await svc.api(`/tenants/${tenantId}/projects/950/items`, { method: 'POST', json: { summary: 'x', dry_run: false, idempotency_key: newKey() } });
    expect(live.status).toBe(501);
    expect(live.body.code).toBe('not_supported');
    expect(haloState()).toBe(before);
  }, 60_000);
});
