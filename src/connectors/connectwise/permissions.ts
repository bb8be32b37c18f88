/**
 * ConnectWise permission checks for the connect page, read-only: the API member's own record
 * (`GET /system/myAccount`: its `securityRole`), then that role's settings (`GET
 * /system/securityRoles/{id}/settings`: per module function `addLevel`, `editLevel`, `deleteLevel`,
 * `inquireLevel`, each `All`, `Mine`, `None`, ...). Shapes: ConnectWise REST API 3.0 (Member,
 * SecurityRoleSetting), as the generated SDKs publish them (docs/vendors.md).
 */
import type { PermissionFinding, PermissionNeed } from '../capabilities';
import type { SyncContext } from '../types';
import { cwProfile, CW_MAX_PAGE_SIZE } from './client';
import { vendorSession } from '../vendor-session';

type Level = 'addLevel' | 'editLevel' | 'inquireLevel';

/** Each need: the module and function as the Security Roles screen names them, and the level it needs. */
const NEEDS: readonly (PermissionNeed & { module: string; fn: string; level: Level })[] = [
  { id: 'tickets.inquire', capability: 'read', module: 'Service Desk', fn: 'Service Tickets', level: 'inquireLevel', vendorTerms: 'Service Desk > Service Tickets: Inquire', checkedBy: 'the API member\'s security role settings' },
  { id: 'tickets.add', capability: 'ticket.create', module: 'Service Desk', fn: 'Service Tickets', level: 'addLevel', vendorTerms: 'Service Desk > Service Tickets: Add', checkedBy: 'the API member\'s security role settings' },
  { id: 'tickets.edit', capability: 'ticket.update', module: 'Service Desk', fn: 'Service Tickets', level: 'editLevel', vendorTerms: 'Service Desk > Service Tickets: Edit', checkedBy: 'the API member\'s security role settings' },
  { id: 'time.add', capability: 'time.create', module: 'Time & Expense', fn: 'Time Entry', level: 'addLevel', vendorTerms: 'Time & Expense > Time Entry: Add', checkedBy: 'the API member\'s security role settings' },
  { id: 'project-tickets.add', capability: 'project.write', module: 'Project', fn: 'Project Tickets', level: 'addLevel', vendorTerms: 'Project > Project Tickets: Add', checkedBy: 'the API member\'s security role settings' },
  { id: 'agreements.edit', capability: 'charge.approve', module: 'Finance', fn: 'Agreements', level: 'editLevel', vendorTerms: 'Finance > Agreements: Edit', checkedBy: 'the API member\'s security role settings' },
];

export const CONNECTWISE_PERMISSIONS: readonly PermissionNeed[] = NEEDS.map(({ id, capability, vendorTerms, checkedBy }) => ({ id, capability, vendorTerms, checkedBy }));

interface RoleSetting { moduleName?: string; moduleFunctionName?: string; addLevel?: string; editLevel?: string; inquireLevel?: string }

export async function checkConnectWisePermissions(ctx: SyncContext): Promise<PermissionFinding[]> {
  const session = vendorSession(cwProfile, ctx);
  const me = await session.send<{ identifier?: string; securityRole?: { id?: number; name?: string } } | null>({ path: '/system/myAccount', read: false });
  const role = me?.securityRole;
  if (role?.id == null) return NEEDS.map((n) => ({ id: n.id, ok: null, detail: 'ConnectWise did not name the API member\'s security role.' }));
  const settings = await session.send<RoleSetting[]>({
    path: `/system/securityRoles/${encodeURIComponent(String(role.id))}/settings`, query: { pageSize: CW_MAX_PAGE_SIZE }, read: false,
  });
  const rows = Array.isArray(settings) ? settings : [];
  return NEEDS.map((n) => {
    const row = rows.find((r) => r.moduleName === n.module && r.moduleFunctionName === n.fn);
    const level = row?.[n.level] ?? 'None';
    return { id: n.id, ok: level !== 'None', detail: `security role "${role.name ?? role.id}" has ${n.level.replace('Level', '')} level ${level}` };
  });
}
