/**
 * Synthetic records for benchmarks (`grow`): plain loops over the instance's own lookups, so tens of
 * thousands of tickets take milliseconds and reference clients, statuses and teams that exist.
 */
import { badRequest } from './errors';
import { HALO_CLOSED_STATUS_ID, haloTime, type HaloInstance, type HaloRecord, type HaloResource } from './store';

const ISSUES = [
  'Password reset', 'Printer offline', 'Slow laptop', 'VPN disconnects', 'Mailbox full', 'New starter setup',
  'Backup failed', 'Wi-Fi drops', 'Licence request', 'Disk space low',
];

function pickFrom<T>(xs: T[], i: number, fallback: T): T {
  return xs.length ? xs[i % xs.length] : fallback;
}

function growFaults(inst: HaloInstance, resource: 'tickets' | 'projects', count: number, now: string): void {
  const clients = inst.table('clients').rows.filter((c) => c.inactive !== true);
  const statusIds = inst.table('statuses').rows.map((s) => s.id as number);
  const priorityIds = inst.table('priorities').rows.map((p) => p.priorityid as number);
  const teams = inst.table('teams').rows.filter((t) => t.inactive !== true).map((t) => t.name as string);
  const table = inst.table(resource);
  const first = inst.reserveIds(resource, count);
  for (let i = 0; i < count; i++) {
    const client = pickFrom<HaloRecord | null>(clients, i, null);
    const statusId = pickFrom(statusIds, i, 1);
    table.insert({
      id: first + i,
      dateoccurred: now,
      summary: `${ISSUES[i % ISSUES.length]} #${first + i}`,
      details: 'Synthetic ticket for load tests.',
      status_id: statusId,
      tickettype_id: resource === 'projects' ? 6 : 1,
      sla_id: 1,
      priority_id: pickFrom(priorityIds, i, 3),
      client_id: client ? client.id : 0,
      client_name: client ? client.name : '',
      site_id: client ? client.main_site_id ?? 0 : 0,
      site_name: client ? client.main_site_name ?? '' : '',
      user_id: 0,
      user_name: '',
      team: pickFrom(teams, i, ''),
      agent_id: 0,
      category_1: '',
      dateclosed: statusId === HALO_CLOSED_STATUS_ID ? now : null,
      lastactiondate: now,
      last_update: now,
      onhold: false,
      inactive: false,
      is_project: resource === 'projects',
      locked: false,
    });
  }
}

function growClients(inst: HaloInstance, count: number, now: string): void {
  const table = inst.table('clients');
  const first = inst.reserveIds('clients', count);
  for (let i = 0; i < count; i++) {
    const id = first + i;
    table.insert({
      id, name: `Synthetic Client ${id}`, ref: `SYN${id}`, toplevel_id: 1, toplevel_name: 'Customers', inactive: false,
      colour: '#2563eb', website: '', main_site_id: 0, main_site_name: 'Main', datecreated: now, alastupdate: now,
    });
  }
}

function growUsers(inst: HaloInstance, count: number, now: string): void {
  const clients = inst.table('clients').rows;
  const table = inst.table('users');
  const first = inst.reserveIds('users', count);
  for (let i = 0; i < count; i++) {
    const id = first + i;
    const client = pickFrom<HaloRecord | null>(clients, i, null);
    table.insert({
      id, name: `User ${id}`, firstname: 'User', surname: String(id), title: '', emailaddress: `user${id}@example.com`,
      phonenumber: '', client_id: client ? client.id : 0, client_name: client ? client.name : '',
      site_id: client ? client.main_site_id ?? 0 : 0, site_name: client ? client.main_site_name ?? '' : '',
      inactive: false, ulastupdate: now,
    });
  }
}

export function grow(inst: HaloInstance, resource: HaloResource, count: number, at: Date): void {
  const now = haloTime(at);
  if (resource === 'tickets' || resource === 'projects') growFaults(inst, resource, count, now);
  else if (resource === 'clients') growClients(inst, count, now);
  else if (resource === 'users') growUsers(inst, count, now);
  else throw badRequest(`grow does not support ${resource}`);
}
