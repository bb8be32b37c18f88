/**
 * Synthetic records for `grow` (benchmarks): fast, deterministic, valid against the instance's
 * picklists and references. Times are spread over the past so that growing never moves records into
 * the future (incremental syncs keep working).
 */
import type { EntityName } from './fields';
import type { InstanceState, Row } from './store';

const SUMMARIES = [
  'Outlook keeps prompting for password', 'VPN drops every 10 minutes', 'Printer offline on 2nd floor',
  'New starter laptop setup', 'Disk space low on file server', 'Backup job failed overnight',
  'Cannot access shared mailbox', 'MFA reset request', 'Teams calls dropping audio', 'Firewall firmware update',
];
const TOWNS = ['Leeds', 'Bristol', 'Denver', 'Austin', 'Tampa', 'Raleigh', 'Columbus', 'Boise'];
const TRADES = ['Dental', 'Logistics', 'Legal', 'Builders', 'Accounting', 'Veterinary', 'Engineering', 'Realty'];

function picklistValues(state: InstanceState, entity: EntityName, field: string): number[] {
  return (state.field(entity, field)?.picklistValues ?? []).filter((p) => p.isActive).map((p) => Number(p.value));
}

function ensureCompany(state: InstanceState, at: string): Row[] {
  const companies = state.table('Companies').all();
  if (companies.length) return companies as Row[];
  growCompanies(state, 1, at);
  return state.table('Companies').all() as Row[];
}

function growCompanies(state: InstanceState, count: number, at: string): void {
  const table = state.table('Companies');
  const start = table.nextId();
  const rows: Row[] = [];
  for (let i = 0; i < count; i++) {
    const n = start + i;
    rows.push(state.normalize('Companies', {
      id: n,
      companyName: `${TOWNS[n % TOWNS.length]} ${TRADES[(n >> 3) % TRADES.length]} ${n}`,
      companyNumber: `SYN${n}`,
      companyType: 1,
      phone: `555-01${String(n % 100).padStart(2, '0')}`,
      isActive: true,
      createDate: at,
      lastActivityDate: at,
      lastTrackedModifiedDateTime: at,
    }));
  }
  table.insertMany(rows);
}

/** Appends `count` synthetic rows of an entity. Returns false for entities it cannot grow. */
export function grow(state: InstanceState, entity: EntityName, count: number, nowMs: number): boolean {
  const at = new Date(nowMs - 24 * 3_600_000).toISOString();
  if (entity === 'Companies') {
    growCompanies(state, count, at);
    return true;
  }
  if (entity === 'Tickets') {
    const companies = ensureCompany(state, at);
    const statuses = picklistValues(state, 'Tickets', 'status');
    const priorities = picklistValues(state, 'Tickets', 'priority');
    const queues = picklistValues(state, 'Tickets', 'queueID');
    const table = state.table('Tickets');
    const start = table.nextId();
    const rows: Row[] = [];
    // Spread create/activity times over the past, one minute apart, newest last.
    const first = nowMs - 24 * 3_600_000 - count * 60_000;
    for (let i = 0; i < count; i++) {
      const id = start + i;
      const status = statuses[i % statuses.length];
      const created = new Date(first + i * 60_000).toISOString();
      rows.push(state.normalize('Tickets', {
        id,
        ticketNumber: `T20260101.${String(id).padStart(6, '0')}`,
        title: `${SUMMARIES[i % SUMMARIES.length]} (#${id})`,
        description: 'Synthetic ticket for load tests.',
        status,
        priority: priorities[i % priorities.length],
        queueID: queues.length ? queues[i % queues.length] : null,
        companyID: companies[i % companies.length].id,
        ticketType: 1,
        ticketCategory: 3,
        source: null,
        createDate: created,
        creatorType: 1,
        lastActivityDate: created,
        completedDate: status === 5 ? created : null,
      }));
    }
    table.insertMany(rows);
    return true;
  }
  if (entity === 'Contacts') {
    const companies = ensureCompany(state, at);
    const table = state.table('Contacts');
    const start = table.nextId();
    const rows: Row[] = [];
    for (let i = 0; i < count; i++) {
      const id = start + i;
      rows.push(state.normalize('Contacts', {
        id,
        companyID: companies[i % companies.length].id,
        firstName: 'Sam',
        lastName: `Contact${id}`,
        emailAddress: `sam.contact${id}@example.com`,
        isActive: 1,
        createDate: at,
        lastActivityDate: at,
        lastModifiedDate: at,
      }));
    }
    table.insertMany(rows);
    return true;
  }
  return false;
}
