/**
 * API members and their security roles, for the connect page's permission check: `GET /system/myAccount`
 * (the calling member, with `securityRole {id, name}`) and `GET /system/securityRoles/{id}/settings`
 * (SecurityRoleSetting rows: `moduleName`, `moduleFunctionName`, `addLevel`, `editLevel`, `deleteLevel`,
 * `inquireLevel`, ...), in ConnectWise REST 3.0's shapes. Two public development API members: the full
 * one (`sandbox-public`) and one whose role lacks Service Tickets: Add (`sandbox-limited-public`), whose
 * ticket creates are refused as ConnectWise refuses them.
 */
import { CwError } from './errors';

export interface CwSecurityRole {
  id: number;
  name: string;
  settings: { moduleName: string; moduleFunctionName: string; addLevel: string; editLevel: string; deleteLevel: string; inquireLevel: string }[];
}

const FUNCTIONS: [string, string][] = [
  ['Service Desk', 'Service Tickets'], ['Time & Expense', 'Time Entry'], ['Project', 'Project Tickets'],
  ['Finance', 'Agreements'], ['Companies', 'Company Maintenance'], ['System', 'Member Maintenance'],
];

function role(id: number, name: string, lacks: (module: string, fn: string) => Partial<Record<'addLevel' | 'editLevel', string>>): CwSecurityRole {
  return { id, name, settings: FUNCTIONS.map(([moduleName, moduleFunctionName]) => ({ moduleName, moduleFunctionName, addLevel: 'All', editLevel: 'All', deleteLevel: 'None', inquireLevel: 'All', ...lacks(moduleName, moduleFunctionName) })) };
}

export const CW_SECURITY_ROLES: readonly CwSecurityRole[] = [
  role(1, 'Integration (API)', () => ({})),
  role(2, 'Integration read-only', (m, f) => (m === 'Service Desk' && f === 'Service Tickets' ? { addLevel: 'None' } : {})),
];

/** Public key -> the API member it signs in as (the private key of each pair is checked in auth.ts). */
export const CW_API_MEMBERS: Readonly<Record<string, { id: number; identifier: string; roleId: number }>> = {
  'sandbox-public': { id: 900, identifier: 'APIMember', roleId: 1 },
  'sandbox-limited-public': { id: 901, identifier: 'APIReadOnly', roleId: 2 },
};

/** The public key of the request's Basic credentials (already authenticated). */
export function publicKeyOf(authorization: string | undefined): string {
  const m = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  const user = m ? Buffer.from(m[1], 'base64').toString('utf8').split(':')[0] : '';
  return user.slice(user.indexOf('+') + 1);
}

export function memberOf(authorization: string | undefined) {
  const member = CW_API_MEMBERS[publicKeyOf(authorization)] ?? CW_API_MEMBERS['sandbox-public'];
  const securityRole = CW_SECURITY_ROLES.find((r) => r.id === member.roleId)!;
  return { member, securityRole };
}

/** Refuses a call the member's role does not allow, as ConnectWise does (403). */
export function requireLevel(authorization: string | undefined, moduleName: string, fn: string, level: 'addLevel' | 'editLevel'): void {
  const { securityRole } = memberOf(authorization);
  const s = securityRole.settings.find((x) => x.moduleName === moduleName && x.moduleFunctionName === fn);
  if (!s || s[level] === 'None') {
    throw new CwError(403, 'Forbidden', `You do not have permission to perform this action: ${moduleName} > ${fn} ${level.replace('Level', '')} level is None for security role '${securityRole.name}'.`);
  }
}
