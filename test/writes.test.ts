/**
 * Ticket write-back against the simulators over HTTP (interface document rules 3-7 and 14, docs/architecture.md,
 * Writes): previews change nothing, commits land once (replays, races, throttling, lost answers),
 * every bad field is a 422 that creates nothing, grants gate every write, and the limited connector
 * keeps to its fixture host.
 */
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: any;
let halo: any;

beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise;
  halo = svc.services.simulators!.halopsa;
}, 120_000);
afterAll(async () => { await svc?.close(); });

const cwTickets = () => cw.list('sandbox-alpha', 'tickets') as any[];
let keySeq = 0;
const newKey = () => `key-${Date.now()}-${keySeq++}`;
const alpha = (path: string) => `/tenants/${svc.alphaId}${path}`;
const beta = (path: string) => `/tenants/${svc.betaId}${path}`;
const company = 'Lakeshore Family Dental';

async function aCompany(): Promise<string> {
  const counts = new Map<string, number>();
  for (const c of cw.list('sandbox-alpha', 'companies') as any[]) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  return [...counts.entries()].find(([, n]) => n === 1)![0];
}

async function injectFault(vendor: string, fault: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, body: JSON.stringify(fault),
  });
  expect(res.status).toBe(204);
}
const clearFaults = (vendor: string) =>
  fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.config.adminToken}` } });

async function createLinkedTicket(summary = 'Backup job failed on FS01'): Promise<string> {
  const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary, dry_run: false, idempotency_key: newKey() } });
  expect(res.status).toBe(201);
  return res.body.ticket_ref;
}

describe('ticket create: preview', () => {
  it('is the default, shows the exact vendor request, and changes nothing', async () => {
    const before = JSON.stringify(cwTickets());
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Disk almost full on SQL01', priority: 'high' } });
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
    const [target] = res.body.preview.targets;
    expect(target.connector).toBe('connectwise');
    expect(target.requests[0]).toMatchObject({ method: 'POST', path: '/service/tickets' });
    expect(target.requests[0].body.summary).toBe('Disk almost full on SQL01');
    expect(JSON.stringify(cwTickets())).toBe(before);
  });

  it('the committed request is the previewed one', async () => {
    const body = { company_name: await aCompany(), summary: 'VPN drops every hour', priority: 'high', idempotency_key: newKey() };
    const preview = (await svc.api(alpha('/tickets'), { method: 'POST', json: body })).body.preview.targets[0].requests[0].body;
    const commit = await svc.api(alpha('/tickets'), { method: 'POST', json: { ...body, dry_run: false } });
    expect(commit.status).toBe(201);
    const stored = cw.get('sandbox-alpha', 'tickets', Number(commit.body.ticket_ref));
    expect(stored.summary).toBe(preview.summary);
    expect(stored.externalXRef).toBe(preview.externalXRef);
    expect(stored.priority.id).toBe(preview.priority.id);
    expect(stored.company.id).toBe(preview.company.id);
  });
});

describe('a commit needs an idempotency_key', () => {
  it('without one the commit is a 422 HTTPValidationError naming idempotency_key, and nothing is written', async () => {
    const before = JSON.stringify(cwTickets());
    for (const [path, json] of [
      ['/tickets', { company_name: await aCompany(), summary: 'No key', dry_run: false }],
      ['/time-entries', { ticket_ref: '1', hours: 1, billable: true, dry_run: false }],
      ['/tickets/write', { ticket_ref: '1', action: 'note', note: { text: 'x' }, dry_run: false }],
    ] as const) {
      const res = await svc.api(alpha(path), { method: 'POST', json });
      expect({ path, status: res.status }).toEqual({ path, status: 422 });
      expect(res.body.detail.map((d: any) => d.loc.join('.'))).toContain('body.idempotency_key');
    }
    expect(JSON.stringify(cwTickets())).toBe(before);
  });

  it('the Idempotency-Key header is the same value: a commit with it lands once, and a replay by header returns the first answer', async () => {
    const key = newKey();
    const json = { company_name: await aCompany(), summary: 'Keyed by header', dry_run: false };
    const first = await svc.api(alpha('/tickets'), { method: 'POST', json, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const again = await svc.api(alpha('/tickets'), { method: 'POST', json: { ...json, idempotency_key: key } });
    expect(again.status).toBe(201);
    expect(again.body.idempotent_replay).toBe(true);
    expect(again.headers.get('idempotent-replay')).toBe('true');
    expect(again.body.ticket_ref).toBe(first.body.ticket_ref);
    expect(cwTickets().filter((t: any) => t.summary === 'Keyed by header')).toHaveLength(1);
  });

  it('a header and a body key that differ are a 422, and nothing is written', async () => {
    const before = JSON.stringify(cwTickets());
    const res = await svc.api(alpha('/tickets'), {
      method: 'POST', json: { company_name: await aCompany(), summary: 'Two keys', dry_run: false, idempotency_key: 'a-1' }, headers: { 'Idempotency-Key': 'b-2' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['header', 'Idempotency-Key']);
    expect(JSON.stringify(cwTickets())).toBe(before);
  });
});

describe('text the store cannot hold', () => {
  it.each([
    ['company_name', 'Contoso\u0000 Ltd'], ['summary', 'Disk \ud800 full'], ['priority', 'high\u0000'], ['status', '\udc00'],
    ['board', 'x\u0000'], ['idempotency_key', 'k\u0000'],
  ])('%s holding a NUL or a lone surrogate is a 422 naming it, never a 500, and nothing is written', async (field, value) => {
    const before = JSON.stringify(cwTickets());
    const json = { company_name: 'Contoso Ltd', summary: 'Text check', dry_run: false, idempotency_key: newKey(), [field]: value };
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: any) => d.loc.join('.'))).toContain(`body.${field}`);
    expect(JSON.stringify(cwTickets())).toBe(before);
  });

  it('a ticket_ref or a path id holding a NUL is refused (422) or not found (404), never a 500', async () => {
    const write = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: '1\u0000', action: 'note', note: { text: 'x' } } });
    expect(write.status).toBe(422);
    const resolve = await svc.api(alpha('/findings/a%00b/resolve'), { method: 'POST', json: {} });
    expect(resolve.status).toBe(404);
  });
});

describe('ticket create: commit exactly once', () => {
  it('a replay returns idempotent_replay and the original result', async () => {
    const body = { company_name: await aCompany(), summary: 'Printer offline', dry_run: false, idempotency_key: newKey() };
    const first = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    expect(first.status).toBe(201);
    expect(first.body.idempotent_replay).toBe(false);
    const again = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    expect(again.status).toBe(201);
    expect(again.body.idempotent_replay).toBe(true);
    expect(again.body.ticket_ref).toBe(first.body.ticket_ref);
    expect(again.body.results).toEqual(first.body.results);
    expect(cwTickets().filter((t) => t.summary === 'Printer offline')).toHaveLength(1);
  });

  it("a commit's audit entry is stored once, with its answer; a replay adds its own", async () => {
    const body = { company_name: await aCompany(), summary: 'Audited once', dry_run: false, idempotency_key: newKey() };
    const first = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    expect(first.status).toBe(201);
    const entriesFor = async () => ((await svc.api(alpha('/audit?limit=500'))).body.audit as any[])
      .filter((e) => e.action === 'ticket.create.commit' && e.outcome === 'ok' && e.detail.ticket_refs?.includes(first.body.ticket_ref));
    expect(await entriesFor()).toHaveLength(1);
    expect((await entriesFor())[0].detail).toEqual({ dry_run: false, ticket_refs: [first.body.ticket_ref], via: 'api', actor: { kind: 'isv_key', id: expect.any(String), key_prefix: expect.any(String) } });
    await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    expect(await entriesFor()).toHaveLength(2);
  });

  it('the same key with another body is a 409 idempotency_conflict', async () => {
    const key = newKey();
    await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'One', dry_run: false, idempotency_key: key } });
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Two', dry_run: false, idempotency_key: key } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('idempotency_conflict');
  });

  it('20 concurrent commits with one key create one ticket', async () => {
    const body = { company_name: await aCompany(), summary: 'Raced ticket', dry_run: false, idempotency_key: newKey() };
    const answers = await Promise.all(Array.from({ length: 20 }, () => svc.api(alpha('/tickets'), { method: 'POST', json: body })));
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('idempotency_in_progress');
    expect(new Set(created.map((a) => a.body.ticket_ref)).size).toBe(1);
    expect(cwTickets().filter((t) => t.summary === 'Raced ticket')).toHaveLength(1);
  });

  it('429 three times then success creates one ticket', async () => {
    await injectFault('connectwise', { status: 429, times: 3, retryAfterSeconds: 1, pathIncludes: '/service/tickets', method: 'POST' });
    try {
      const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Throttled ticket', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(cwTickets().filter((t) => t.summary === 'Throttled ticket')).toHaveLength(1);
    } finally { await clearFaults('connectwise'); }
  }, 60_000);

  it('429 forever returns 429 rate_limited with Retry-After and creates nothing', async () => {
    await injectFault('connectwise', { status: 429, times: 1000, retryAfterSeconds: 1, pathIncludes: '/service/tickets', method: 'POST' });
    try {
      const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Never lands', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(cwTickets().filter((t) => t.summary === 'Never lands')).toHaveLength(0);
    } finally { await clearFaults('connectwise'); }
  }, 60_000);

  it("a vendor Retry-After longer than the request may wait answers 429 with that Retry-After at once, and nothing lands later", async () => {
    await injectFault('connectwise', { status: 429, times: 1000, retryAfterSeconds: 300, pathIncludes: '/service/tickets', method: 'POST' });
    const key = newKey();
    const body = { company_name: await aCompany(), summary: 'Throttled for five minutes', dry_run: false, idempotency_key: key };
    let first;
    try {
      first = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    } finally { await clearFaults('connectwise'); }
    expect(first.status).toBe(429);
    expect(first.body.code).toBe('rate_limited');
    expect(first.headers.get('retry-after')).toBe('300');
    // The vendor takes writes again: the job that answered 429 must not land the ticket behind the caller's back.
    await new Promise((r) => setTimeout(r, 1500));
    expect(cwTickets().filter((t) => t.summary === 'Throttled for five minutes')).toHaveLength(0);
    // The caller retries with the same key when it chooses: exactly one ticket.
    const retry = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
    expect(retry.status).toBe(201);
    expect(cwTickets().filter((t) => t.summary === 'Throttled for five minutes')).toHaveLength(1);
  }, 60_000);

  it('a create the vendor accepted while the connection dropped ends with one ticket after the retry', async () => {
    await injectFault('connectwise', { status: 200, times: 1, pathIncludes: '/service/tickets', method: 'POST', afterHandler: 'drop' });
    try {
      const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Answer lost', dry_run: false, idempotency_key: newKey() } });
      expect(res.status).toBe(201);
      expect(res.body.results[0].reconciled).toBe(true);
      expect(cwTickets().filter((t) => t.summary === 'Answer lost')).toHaveLength(1);
    } finally { await clearFaults('connectwise'); }
  }, 60_000);
});

describe('bad fields: 422 and nothing created', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['unknown priority id', { priority: '99999' }, 'priority'],
    ['unknown status id', { status: '99999' }, 'status'],
    ['unknown board id', { board: '99999' }, 'board'],
    ['summary over 100 characters (ConnectWise)', { summary: 'x'.repeat(101) }, 'summary'],
    ['unknown company', { company_name: 'No Such Company Ltd' }, 'company_name'],
  ];
  it.each(cases)('%s', async (_n, patch, field) => {
    const count = cwTickets().length;
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Bad field', dry_run: false, idempotency_key: newKey(), ...patch } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation');
    expect(res.body.details.field).toBe(field);
    expect(cwTickets().length).toBe(count);
  });

  it('several bad fields: the refusal names the first in the order board, company, status, priority, every time', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ board: '99999', company_name: company, priority: '99999' }, 422, 'board'],
      [{ company_name: company, priority: '99999' }, 409, 'company_name'],
      [{ status: '99999', priority: '99999' }, 422, 'status'],
    ];
    for (const [patch, status, field] of cases) {
      for (let i = 0; i < 5; i++) {
        const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Bad fields', dry_run: false, idempotency_key: newKey(), ...patch } });
        expect([res.status, res.body.details.field]).toEqual([status, field]);
      }
    }
  });

  it('a refused commit frees its key: sent again it is refused again, not held in progress, and nothing lands', async () => {
    const body = { company_name: await aCompany(), summary: 'Refused twice', dry_run: false, idempotency_key: newKey(), priority: '99999' };
    for (let i = 0; i < 2; i++) {
      const res = await svc.api(alpha('/tickets'), { method: 'POST', json: body });
      expect([res.status, res.body.code]).toEqual([422, 'validation']);
    }
    expect(cwTickets().filter((t) => t.summary === 'Refused twice')).toHaveLength(0);
  });

  it('undeclared properties and wrong types are HTTPValidationError', async () => {
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: 'x', summary: 'y', colour: 'red' } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'colour'], type: 'extra_forbidden' });
    const wrong = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: 'x', summary: 42 } });
    expect(wrong.status).toBe(422);
  });

  it('unknown canonical fields inside vendor_native are ignored, not a server error', async () => {
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Native bag', vendor_native: { summary: 'ignored', severity: 'Medium' } } });
    expect(res.status).toBe(200);
    expect(res.body.ignored_fields).toEqual(['summary']);
    expect(res.body.preview.targets[0].requests[0].body.summary).toBe('Native bag');
  });

  it('two companies with the same name are refused with company_match_ambiguous', async () => {
    const res = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: company, summary: 'Ambiguous' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('company_match_ambiguous');
  });
});

describe('write-back on linked tickets', () => {
  let ref: string;
  beforeAll(async () => { ref = await createLinkedTicket(); });

  it('update, note, close with evidence and reopen land in ConnectWise', async () => {
    const upd = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'update', status: 'in_progress', dry_run: false, idempotency_key: newKey() } });
    expect(upd.status).toBe(200);
    const statuses = (await svc.api(alpha('/ticket-statuses?limit=500'))).body.ticket_statuses;
    const canonOf = (id: number) => statuses.find((s: any) => s.id === String(id))?.canonical;
    expect(canonOf(cw.get('sandbox-alpha', 'tickets', Number(ref)).status.id)).toBe('in_progress');

    const note = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'note', note: { text: 'Restarted the agent', internal: true }, dry_run: false, idempotency_key: newKey() } });
    expect(note.status).toBe(201);
    expect(note.body.created).toBe(true);
    expect(note.body.note_ref).toBeTruthy();

    const noEvidence = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'close', dry_run: false, idempotency_key: newKey() } });
    expect(noEvidence.status).toBe(422);
    expect(noEvidence.body.details.field).toBe('evidence');

    const close = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'close', evidence: 'Backup verified green for 3 nights', dry_run: false, idempotency_key: newKey() } });
    expect(close.status).toBe(201);
    expect(cw.get('sandbox-alpha', 'tickets', Number(ref)).closedFlag).toBe(true);

    const reopen = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'reopen', dry_run: false, idempotency_key: newKey() } });
    expect(reopen.status).toBe(200);
    expect(cw.get('sandbox-alpha', 'tickets', Number(ref)).closedFlag).toBe(false);
  }, 60_000);

  it('a ticket not in the link store is refused', async () => {
    const foreign = cwTickets().find((t) => !t.externalXRef);
    const res = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: String(foreign.id), action: 'note', note: { text: 'x' } } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('a canonical status with no mapping gives status_unmapped with allowed', async () => {
    const conn = (await svc.services.ds.query("SELECT id, status_mapping FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0];
    // Unmap `waiting` on this connection, re-sync in full, and ask for it.
    const mapping = Object.fromEntries(Object.entries(conn.status_mapping).filter(([, v]) => v !== 'waiting'));
    await svc.services.ds.query('UPDATE connections SET status_mapping = $1 WHERE id = $2', [JSON.stringify(mapping), conn.id]);
    try {
      await svc.services.sync.syncConnection(conn.id, { full: true });
      const res = await svc.api(alpha('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'update', status: 'waiting' } });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('status_unmapped');
      expect(res.body.allowed.length).toBeGreaterThan(0);
      expect(res.body.details.allowed).toEqual(res.body.allowed);
    } finally {
      await svc.services.ds.query('UPDATE connections SET status_mapping = $1 WHERE id = $2', [JSON.stringify(conn.status_mapping), conn.id]);
      await svc.services.sync.syncConnection(conn.id, { full: true });
    }
  });
});

describe('time entries', () => {
  let ref: string;
  let member: string;
  beforeAll(async () => {
    ref = await createLinkedTicket('Time target');
    member = (await svc.api(alpha('/members?limit=500'))).body.members.find((m: any) => m.active).id;
  });

  it.each([
    ['1e400 (Infinity)', '{"ticket_ref":"REF","hours":1e400,"billable":true}'],
    ['0', '{"ticket_ref":"REF","hours":0,"billable":true}'],
    ['negative', '{"ticket_ref":"REF","hours":-2,"billable":true}'],
    ['billable missing', '{"ticket_ref":"REF","hours":1}'],
    ['a notes field', '{"ticket_ref":"REF","hours":1,"billable":true,"notes":"x"}'],
  ])('hours/billable: %s gives 422', async (_n, raw) => {
    const res = await svc.api(alpha('/time-entries'), { method: 'POST', body: raw.replace('REF', ref), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
  });

  it('member must be an id from the members list, and ConnectWise needs one: the preview refuses it as the commit does', async () => {
    const unknown = await svc.api(alpha('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours: 1, billable: true, member: 'Jane Doe' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.details.field).toBe('member');
    const preview = await svc.api(alpha('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours: 1, billable: true } });
    expect([preview.status, preview.body.code, preview.body.details.field]).toEqual([422, 'validation', 'member']);
    const live = await svc.api(alpha('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours: 1, billable: true, dry_run: false, idempotency_key: newKey() } });
    expect([live.status, live.body.code, live.body.details.field]).toEqual([422, 'validation', 'member']);
  });

  it('hours that round to nothing at the vendor\'s precision (5e-324: start == end) are 422 validation on hours, preview or commit, and nothing is written', async () => {
    const before = (cw.list('sandbox-alpha', 'time_entries') as any[]).length;
    for (const hours of [5e-324, 1e-6, 0.0001]) {
      for (const extra of [{}, { dry_run: false, idempotency_key: newKey() }]) {
        const res = await svc.api(alpha('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours, billable: true, member, ...extra } });
        expect([res.status, res.body.code, res.body.details?.field]).toEqual([422, 'validation', 'hours']);
      }
    }
    expect((cw.list('sandbox-alpha', 'time_entries') as any[]).length).toBe(before);
  });

  it('posts hours on a linked ticket once, billable as stated', async () => {
    const body = { ticket_ref: ref, hours: 1.5, billable: false, member, dry_run: false, idempotency_key: newKey() };
    const res = await svc.api(alpha('/time-entries'), { method: 'POST', json: body });
    expect(res.status).toBe(201);
    const again = await svc.api(alpha('/time-entries'), { method: 'POST', json: body });
    expect(again.body.idempotent_replay).toBe(true);
    const entries = (cw.list('sandbox-alpha', 'time_entries') as any[]).filter((e) => String(e.chargeToId) === ref);
    expect(entries).toHaveLength(1);
    expect(entries[0].billableOption).toBe('DoNotBill');
    expect(entries[0].actualHours).toBe(1.5);
  });
});

describe('findings and routing', () => {
  it('GET routing shows the recommendation; PUT overrides, null clears, unsupported target is 422', async () => {
    const get = await svc.api(alpha('/routing'));
    expect(get.body).toMatchObject({ recommended: { technical: 'service_ticket', organizational: 'project' }, effective: { technical: 'service_ticket' } });
    const put = await svc.api(alpha('/routing'), { method: 'PUT', json: { overrides: { technical: 'project' } } });
    expect(put.body.effective.technical).toBe('project');
    const bad = await svc.api(alpha('/routing'), { method: 'PUT', json: { overrides: { technical: 'email' } } });
    expect(bad.status).toBe(422);
    const clear = await svc.api(alpha('/routing'), { method: 'PUT', json: { overrides: { technical: null } } });
    expect(clear.body.effective.technical).toBe('service_ticket');
    expect(clear.body.overrides).toEqual({});
  });

  it('a technical finding becomes one service ticket, replay-safe by its id, and resolves with auto-close', async () => {
    const findingId = `finding-${Date.now()}`;
    const body = { kind: 'technical', title: 'Outdated OpenSSL on WEB02', severity: 'high', company_name: await aCompany(), idempotency_key: findingId, dry_run: false };
    const first = await svc.api(alpha('/findings/route'), { method: 'POST', json: body });
    expect(first.status).toBe(201);
    expect(first.body.target).toBe('service_ticket');
    const replay = await svc.api(alpha('/findings/route'), { method: 'POST', json: body });
    expect(replay.body.idempotent_replay).toBe(true);
    expect(cwTickets().filter((t) => t.summary === 'Outdated OpenSSL on WEB02')).toHaveLength(1);

    const resolved = await svc.api(alpha(`/findings/${findingId}/resolve`), { method: 'POST', json: { dry_run: false } });
    expect(resolved.status).toBe(200);
    expect(resolved.body.auto_close).toBe(true);
    expect(cw.get('sandbox-alpha', 'tickets', Number(first.body.ticket_ref)).closedFlag).toBe(true);
  }, 60_000);

  it('an organizational finding goes to an existing project: a project ticket on ConnectWise; a baseline project refuses', async () => {
    const projects = cw.list('sandbox-alpha', 'projects') as any[];
    const baseline = projects.find((p) => p.type?.name === 'Baseline');
    const writable = projects.find((p) => p.type?.name !== 'Baseline');
    const refused = await svc.api(alpha('/findings/route'), { method: 'POST', json: {
      kind: 'organizational', title: 'No MFA policy', severity: 'medium', company_name: baseline.company.name, idempotency_key: `f-${Date.now()}-b`, project_source_id: String(baseline.id),
    } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('project_not_writable');
    const ok = await svc.api(alpha('/findings/route'), { method: 'POST', json: {
      kind: 'organizational', title: 'No MFA policy', severity: 'medium', company_name: writable.company.name, idempotency_key: `f-${Date.now()}-w`, project_source_id: String(writable.id), dry_run: false,
    } });
    expect(ok.status).toBe(201);
    expect(ok.body.target).toBe('project');
  }, 60_000);
});

describe('the limited PSA connector (HaloPSA on sandbox-beta)', () => {
  it('previews and commits ticket create against its fixture host', async () => {
    const client = (halo.list('sandbox-beta', 'clients') as any[]).find((c: any) => c.inactive !== true);
    const dry = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'Halo preview' } });
    expect(dry.status).toBe(200);
    const live = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'Halo live on fixtures', dry_run: false, idempotency_key: newKey() } });
    expect(live.status).toBe(201);
    const ref = live.body.ticket_ref;
    expect(halo.get('sandbox-beta', 'tickets', Number(ref)).summary).toBe('Halo live on fixtures');
    // Write-back and time on the fixture host too.
    const note = await svc.api(beta('/tickets/write'), { method: 'POST', json: { ticket_ref: ref, action: 'note', note: { text: 'Checked the backup logs' }, dry_run: false, idempotency_key: newKey() } });
    expect(note.status).toBe(201);
    const actions = (halo.list('sandbox-beta', 'actions') as any[]).filter((a) => String(a.ticket_id) === ref);
    expect(actions.some((a) => String(a.note).includes('Checked the backup logs'))).toBe(true);
    const time = await svc.api(beta('/time-entries'), { method: 'POST', json: { ticket_ref: ref, hours: 0.5, billable: true, dry_run: false, idempotency_key: newKey() } });
    expect(time.status).toBe(201);
    // No board list on the limited connector: a board is refused before anything leaves.
    const board = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'x', board: '1' } });
    expect(board.status).toBe(422);
  });

  it('project_source_id on ticket create: HaloPSA writes a note on a known project and refuses a missing or baseline one; ConnectWise ignores it', async () => {
    const client = (halo.list('sandbox-beta', 'clients') as any[]).find((c: any) => c.inactive !== true);
    const projects = halo.list('sandbox-beta', 'projects') as any[];
    const locked = projects.find((p) => p.locked === true);
    const open = projects.find((p) => p.locked !== true);
    const onProject = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'Onto a project', project_source_id: String(open.id) } });
    expect(onProject.status).toBe(200);
    // A note on the project (an action on its ticket id), not a new ticket.
    expect(onProject.body.preview.targets[0].requests).toEqual([expect.objectContaining({ method: 'POST', path: '/api/Actions', body: [expect.objectContaining({ ticket_id: open.id })] })]);
    const missing = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'x', project_source_id: '999999' } });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('project_requires_existing');
    const baseline = await svc.api(beta('/tickets'), { method: 'POST', json: { company_name: client.name, summary: 'x', project_source_id: String(locked.id), dry_run: false, idempotency_key: newKey() } });
    expect(baseline.status).toBe(409);
    expect(baseline.body.code).toBe('project_not_writable');
    // The other connectors create a ticket and ignore it (interface document, ticket create).
    const before = cwTickets().length;
    const cwCreate = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: await aCompany(), summary: 'Project id ignored', project_source_id: '999999', dry_run: false, idempotency_key: newKey() } });
    expect(cwCreate.status).toBe(201);
    expect(cwTickets().length).toBe(before + 1);
    expect(JSON.stringify(cw.get('sandbox-alpha', 'tickets', Number(cwCreate.body.ticket_ref)))).not.toContain('999999');
  }, 60_000);

  it('answers 501 for a live commit against a non-fixture host, while previews still work', async () => {
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const t = await svc.graphql('mutation { create_tenant(name: "Halo Prod", slug: "halo-prod") { id } }');
    const tenantId = t.data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenantId, kind: 'psa', connector: 'halopsa', base_url: `${svc.url}/sandbox-vendors/halopsa`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: c.data.create_connection.id });
    await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
    const client = (halo.list('sandbox-beta', 'clients') as any[]).find((x: any) => x.inactive !== true);
    const count = (halo.list('sandbox-beta', 'tickets') as any[]).length;
    expect((await svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', json: { company_name: client.name, summary: 'x' } })).status).toBe(200);
    const live = await svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', json: { company_name: client.name, summary: 'x', dry_run: false, idempotency_key: newKey() } });
    expect(live.status).toBe(501);
    expect(live.body.code).toBe('not_supported');
    expect((halo.list('sandbox-beta', 'tickets') as any[]).length).toBe(count);
    expect((await svc.api(`/tenants/${tenantId}/members`)).status).toBe(501);
  });
});

describe('grants', () => {
  let key: string;
  let isvId: string;
  let connId: string;
  beforeAll(async () => {
    const isv = await svc.graphql('mutation { create_isv(name: "Narrow ISV") { id } }');
    isvId = isv.data.create_isv.id;
    key = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id) { key } }', { id: isvId })).data.issue_api_key.key;
    connId = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0].id;
  });
  const grant = (keys: string[]) => svc.graphql('mutation($i: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $i, connection_id: $c, keys: $k) { id } }', { i: isvId, c: connId, k: keys });

  it.each([
    ['ticket create', 'psa.ticket.create', '/tickets', async () => ({ company_name: await aCompany(), summary: 'x' })],
    ['ticket write', 'psa.ticket.update', '/tickets/write', async () => ({ ticket_ref: '1', action: 'note', note: { text: 'x' } })],
    ['time entry', 'psa.time.create', '/time-entries', async () => ({ ticket_ref: '1', hours: 1, billable: true })],
    ['finding to a ticket', 'psa.ticket.create', '/findings/route', async () => ({ kind: 'technical', title: 't', severity: 'low', company_name: await aCompany(), idempotency_key: 'g1' })],
    ['vendor_native company move', 'psa.company.create', '/tickets', async () => ({ company_name: await aCompany(), summary: 'x', vendor_native: { company: { id: 1 } } })],
  ])('%s without %s gives grant_missing with needed', async (_n, needed, path, body) => {
    // Another key the PSA takes keeps the tenant visible without the one needed.
    await grant(needed === 'psa.company.create' ? ['psa.ticket.create'] : ['psa.company.events']);
    const res = await svc.api(alpha(path), { method: 'POST', key, json: await body() });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'grant_missing', needed, details: { needed } });
  });

  it('a finding routed to a project needs psa.project.write', async () => {
    await grant(['psa.ticket.create']);
    await svc.api(alpha('/routing'), { method: 'PUT', key, json: { overrides: { organizational: 'project' } } });
    const res = await svc.api(alpha('/findings/route'), { method: 'POST', key, json: { kind: 'organizational', title: 't', severity: 'low', company_name: await aCompany(), idempotency_key: 'g2' } });
    expect(res.status).toBe(403);
    expect(res.body.needed).toBe('psa.project.write');
  });

  it('every commit and refusal is in the audit log', async () => {
    const audit = (await svc.api(alpha('/audit?limit=500'))).body.audit;
    expect(audit.some((e: any) => e.action === 'ticket.create.commit' && e.outcome === 'ok')).toBe(true);
    expect(audit.some((e: any) => e.outcome === 'refused' && e.detail.code === 'validation')).toBe(true);
  });
});

describe('Autotask (live PSA connector)', () => {
  it('syncs, creates a ticket once, and refuses hoursWorked over 24 before anything leaves', async () => {
    const at = svc.services.simulators!.autotask as any;
    at.seed('autotask-demo', loadVendorFixtures('autotask-demo', 'autotask').resources);
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const t = await svc.graphql('mutation { create_tenant(name: "Autotask MSP", slug: "autotask-msp") { id } }');
    const tenantId = t.data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenantId, kind: 'psa', connector: 'autotask', base_url: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
        credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
        status_mapping: Object.entries(loadVendorFixtures('autotask-demo', 'autotask').statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })) },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create","psa.ticket.update","psa.time.create"]) { id } }', { i: isv, c: c.data.create_connection.id });
    const sync = await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
    expect(sync.body.ok).toBe(true);
    expect((await svc.api(`/tenants/${tenantId}/ticket-statuses`)).body.ticket_statuses.length).toBeGreaterThanOrEqual(8);

    const companies = at.list('autotask-demo', 'Companies') as any[];
    const names = companies.map((x: any) => x.companyName);
    const unique = companies.find((x: any) => x.id !== 0 && names.filter((n: string) => n === x.companyName).length === 1);
    const body = { company_name: unique.companyName, summary: 'Autotask ticket', priority: 'high', dry_run: false, idempotency_key: newKey() };
    const res = await svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body });
    expect(res.status).toBe(201);
    await svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body });
    expect((at.list('autotask-demo', 'Tickets') as any[]).filter((x: any) => x.title === 'Autotask ticket')).toHaveLength(1);

    const member = (await svc.api(`/tenants/${tenantId}/members?limit=500`)).body.members.find((m: any) => m.active).id;
    const tooLong = await svc.api(`/tenants/${tenantId}/time-entries`, { method: 'POST', json: { ticket_ref: res.body.ticket_ref, hours: 25, billable: true, member, dry_run: false, idempotency_key: newKey() } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.details.field).toBe('hours');
    const ok = await svc.api(`/tenants/${tenantId}/time-entries`, { method: 'POST', json: { ticket_ref: res.body.ticket_ref, hours: 2, billable: true, member, dry_run: false, idempotency_key: newKey() } });
    expect(ok.status).toBe(201);
  }, 60_000);
});
