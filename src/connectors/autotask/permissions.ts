/**
 * Autotask permission checks for the connect page, read-only: `GET <Entity>/entityInformation` answers,
 * for the API user's security level, whether it can create, update and query the entity (Autotask REST
 * API, "entityInformation"; docs/vendors.md, third pass).
 */
import type { PermissionFinding, PermissionNeed } from '../capabilities';
import type { SyncContext } from '../types';
import { entityInformation } from './client';

type Flag = 'canCreate' | 'canUpdate' | 'canQuery';

const NEEDS: readonly (PermissionNeed & { entity: string; flag: Flag })[] = [
  { id: 'tickets.query', capability: 'read', entity: 'Tickets', flag: 'canQuery', vendorTerms: 'Tickets: query (the API user\'s security level)', checkedBy: 'Tickets/entityInformation' },
  { id: 'tickets.create', capability: 'ticket.create', entity: 'Tickets', flag: 'canCreate', vendorTerms: 'Tickets: create (the API user\'s security level)', checkedBy: 'Tickets/entityInformation' },
  { id: 'tickets.update', capability: 'ticket.update', entity: 'Tickets', flag: 'canUpdate', vendorTerms: 'Tickets: update (the API user\'s security level)', checkedBy: 'Tickets/entityInformation' },
  { id: 'time.create', capability: 'time.create', entity: 'TimeEntries', flag: 'canCreate', vendorTerms: 'Time Entries: create (the API user\'s security level)', checkedBy: 'TimeEntries/entityInformation' },
  { id: 'project-notes.create', capability: 'project.write', entity: 'ProjectNotes', flag: 'canCreate', vendorTerms: 'Project Notes: create (the API user\'s security level)', checkedBy: 'ProjectNotes/entityInformation' },
];

export const AUTOTASK_PERMISSIONS: readonly PermissionNeed[] = NEEDS.map(({ id, capability, vendorTerms, checkedBy }) => ({ id, capability, vendorTerms, checkedBy }));

export async function checkAutotaskPermissions(ctx: SyncContext): Promise<PermissionFinding[]> {
  const info = new Map<string, Awaited<ReturnType<typeof entityInformation>>>();
  for (const entity of new Set(NEEDS.map((n) => n.entity))) info.set(entity, await entityInformation(ctx, entity));
  return NEEDS.map((n) => {
    const v = info.get(n.entity)?.[n.flag];
    return { id: n.id, ok: typeof v === 'boolean' ? v : null, detail: `${n.entity}/entityInformation ${n.flag}: ${v ?? 'not answered'}` };
  });
}
