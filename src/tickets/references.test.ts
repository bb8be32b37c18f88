/**
 * Reference resolution on the real store: what a write names (company, priority, status, board,
 * member, project) against the synced lists of its connection, and every refusal with its code.
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../../entities';
import { openDatabase, type Database } from '../db/database';
import { ServiceError } from '../errors/service-error';
import { testDatabaseOptions } from '../../test/support/runtime';
import { ReferenceResolver } from './references';

let db: Database;
let refs: ReferenceResolver;
const tenantId = randomUUID();
const c = { id: randomUUID(), tenantId, connector: 'test-psa', kind: 'psa' } as Connection;
const bare = { id: randomUUID(), tenantId, connector: 'bare-psa', kind: 'psa' } as Connection;

async function insert(table: string, conn: Connection, sourceId: string, fields: Record<string, unknown>): Promise<void> {
  const cols = ['tenant_id', 'connection_id', 'source_id', 'raw', 'raw_hash', 'synced_at', ...Object.keys(fields)];
  const values = [tenantId, conn.id, sourceId, '{}', 'h', new Date(), ...Object.values(fields)];
  await db.dataSource.query(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, values);
}

const codeOf = (p: Promise<unknown>) => p.then((v) => ({ ok: v }), (e) => (e instanceof ServiceError ? { code: e.code, message: e.message, extras: e.extras } : { error: String(e) }));

beforeAll(async () => {
  db = await openDatabase(testDatabaseOptions());
  refs = new ReferenceResolver(db.dataSource);
  await insert('companies', c, '10', { name: 'Contoso' });
  await insert('companies', c, '11', { name: 'Lakeshore Family Dental' });
  await insert('companies', c, '12', { name: 'Lakeshore Family Dental' });
  await insert('ticket_priorities', c, 'p1', { name: 'Priority 1', canonical: 'critical', sort_order: 1 });
  await insert('ticket_priorities', c, 'p3', { name: 'Priority 3', canonical: 'medium', sort_order: 3 });
  await insert('ticket_boards', c, 'b1', { name: 'Service Desk' });
  await insert('ticket_boards', c, 'b2', { name: 'Projects' });
  await insert('ticket_statuses', c, 's1', { name: 'New', board_source_id: 'b1', canonical: 'new', closed: false, sort_order: 1 });
  await insert('ticket_statuses', c, 's2', { name: 'Closed', board_source_id: 'b1', canonical: 'closed', closed: true, sort_order: 2 });
  await insert('ticket_statuses', c, 's9', { name: 'New (projects)', board_source_id: 'b2', canonical: 'new', closed: false, sort_order: 1 });
  await insert('members', c, 'm1', { member_ref: 'jdoe', display_name: 'J Doe', active: true });
  await insert('members', c, 'm2', { member_ref: 'gone', display_name: 'Gone', active: false });
  await insert('projects', c, 'pr1', { name: 'Rollout', company_source_id: '10', baseline: false });
  await insert('projects', c, 'pr2', { name: 'Template', company_source_id: '10', baseline: true });
}, 60_000);
afterAll(async () => { await db?.close(); });

describe('priority', () => {
  it('an id from the list, or a canonical priority through its mapping', async () => {
    expect(await refs.priority(c, 'p3')).toBe('p3');
    expect(await refs.priority(c, 'critical')).toBe('p1');
  });
  it('a canonical priority no vendor priority maps to, and an unknown id, are validation on priority', async () => {
    expect(await codeOf(refs.priority(c, 'low'))).toMatchObject({ code: 'validation', extras: { details: { field: 'priority' } } });
    expect(await codeOf(refs.priority(c, 'p7'))).toMatchObject({ code: 'validation', extras: { details: { field: 'priority' } } });
  });
  it('a connection without a priority list takes canonical values only', async () => {
    expect(await refs.priority(bare, 'high')).toBeNull();
    expect(await codeOf(refs.priority(bare, 'p1'))).toMatchObject({ code: 'validation' });
  });
});

describe('status', () => {
  it('resolves on the board the ticket is on', async () => {
    expect(await refs.status(c, 'new', 'b1')).toBe('s1');
    expect(await refs.status(c, 'new', 'b2')).toBe('s9');
    expect(await refs.status(c, 's2', 'b1')).toBe('s2');
  });
  it('an id of another board is not an id of this one', async () => {
    expect(await codeOf(refs.status(c, 's9', 'b1'))).toMatchObject({ code: 'validation', extras: { details: { field: 'status' } } });
  });
  it('a canonical status without a mapping is status_unmapped with the mapped vendor statuses', async () => {
    expect(await codeOf(refs.status(c, 'waiting', 'b1'))).toMatchObject({ code: 'status_unmapped', extras: { allowed: ['New', 'Closed'] } });
  });
  it('a connection without a status list takes canonical values only', async () => {
    expect(await refs.status(bare, 'closed', null)).toBeNull();
    expect(await codeOf(refs.status(bare, 's1', null))).toMatchObject({ code: 'validation' });
  });
});

describe('board, member, project', () => {
  it('a board must be an id from the list', async () => {
    expect(await refs.board(c, 'b2')).toBe('b2');
    expect(await codeOf(refs.board(c, 'Service Desk'))).toMatchObject({ code: 'validation', extras: { details: { field: 'board' } } });
  });
  it('a member must be an active id from the list', async () => {
    expect(await refs.member(c, 'jdoe')).toBe('jdoe');
    expect(await codeOf(refs.member(c, 'J Doe'))).toMatchObject({ code: 'validation', extras: { details: { field: 'member' } } });
    expect(await codeOf(refs.member(c, 'gone'))).toMatchObject({ code: 'validation', message: expect.stringContaining('inactive') });
  });
  it('a project must exist and not be a baseline', async () => {
    expect(await refs.project(c, 'pr1')).toBe('pr1');
    expect(await codeOf(refs.project(c, 'pr404'))).toMatchObject({ code: 'project_requires_existing' });
    expect(await codeOf(refs.project(c, 'pr2'))).toMatchObject({ code: 'project_not_writable' });
  });
  it("a company's first writable project, never a baseline", async () => {
    expect(await refs.projectOfCompany(c, '10')).toBe('pr1');
    expect(await codeOf(refs.projectOfCompany(c, '11'))).toMatchObject({ code: 'project_requires_existing' });
  });
});
