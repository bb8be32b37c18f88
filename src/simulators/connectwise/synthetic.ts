/**
 * Synthetic records for load tests: `grow(instance, 'tickets', n)` spreads n tickets over the
 * instance's companies, service boards, their statuses and the priorities. Deterministic (the i-th
 * record is always the same apart from ids and times) and cheap: no per-record lookups.
 */
import { boardRef, companyRef, cwTime, priorityRef, statusRef, type CwRecord, type Instance } from './store';

const PROBLEMS = [
  'Outlook keeps asking for password', 'VPN disconnects every few minutes', 'Printer offline on 2nd floor',
  'Backup job failed overnight', 'Disk space low on file server', 'New starter laptop setup',
  'MFA prompt not arriving', 'Teams calls dropping audio', 'Firewall firmware update', 'Antivirus definitions out of date',
];

export const GROWABLE = ['tickets', 'companies', 'contacts'] as const;

export function grow(inst: Instance, resource: string, count: number, at: Date, by: string): void {
  if (!Number.isInteger(count) || count < 0) throw new Error('grow: count must be a non-negative integer');
  const t = cwTime(at);
  const info = { lastUpdated: t, updatedBy: by, dateEntered: t, enteredBy: by };
  switch (resource) {
    case 'tickets': return growTickets(inst, count, info);
    case 'companies': return growCompanies(inst, count, info);
    case 'contacts': return growContacts(inst, count, info);
    default: throw new Error(`grow: the ConnectWise simulator can grow ${GROWABLE.join(', ')}, not ${resource}`);
  }
}

function growTickets(inst: Instance, count: number, info: CwRecord): void {
  const companies = inst.table('companies').rows.map(companyRef);
  const boards = inst.table('boards').rows.filter((b) => !b.projectFlag && !b.inactiveFlag);
  const statusesByBoard = boards.map((b) => inst.table('statuses').rows.filter((s) => s.board?.id === b.id && !s.inactive));
  const priorities = inst.table('priorities').rows.map(priorityRef);
  if (!companies.length || !boards.length || !priorities.length || statusesByBoard.some((s) => !s.length)) {
    throw new Error('grow tickets: seed companies, boards with statuses and priorities first');
  }
  const boardRefs = boards.map(boardRef);
  const statusRefs = statusesByBoard.map((list) => list.map(statusRef));
  for (let i = 0; i < count; i++) {
    const b = i % boards.length;
    const s = Math.floor(i / boards.length) % statusesByBoard[b].length;
    const status = statusesByBoard[b][s];
    const rec: CwRecord = {
      id: inst.nextId('tickets'),
      summary: `${PROBLEMS[i % PROBLEMS.length]} (#${i + 1})`,
      recordType: 'ServiceTicket',
      board: boardRefs[b],
      status: statusRefs[b][s],
      company: companies[i % companies.length],
      priority: priorities[i % priorities.length],
      severity: 'Medium',
      impact: 'Medium',
      closedFlag: status.closedStatus === true,
      actualHours: 0,
      _info: { ...info },
    };
    if (rec.closedFlag) {
      rec.closedDate = info.lastUpdated;
      rec.closedBy = info.updatedBy;
    }
    inst.insert('tickets', rec);
  }
}

function growCompanies(inst: Instance, count: number, info: CwRecord): void {
  for (let i = 0; i < count; i++) {
    const id = inst.nextId('companies');
    inst.insert('companies', {
      id,
      identifier: `SynthCo${id}`,
      name: `Synthetic Customer ${id}`,
      status: { id: 1, name: 'Active' },
      types: [{ id: 1, name: 'Client' }],
      deletedFlag: false,
      _info: { ...info },
    });
  }
}

function growContacts(inst: Instance, count: number, info: CwRecord): void {
  const companies = inst.table('companies').rows.map(companyRef);
  if (!companies.length) throw new Error('grow contacts: seed companies first');
  for (let i = 0; i < count; i++) {
    const id = inst.nextId('contacts');
    inst.insert('contacts', {
      id,
      firstName: 'Synthetic',
      lastName: `Contact ${id}`,
      company: companies[i % companies.length],
      inactiveFlag: false,
      communicationItems: [
        { id: id * 10, type: { id: 1, name: 'Email' }, value: `contact${id}@example.com`, defaultFlag: true, communicationType: 'Email' },
      ],
      _info: { ...info },
    });
  }
}
