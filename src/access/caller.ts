/**
 * Who is calling. Three kinds (docs/architecture.md, Tenancy, keys and grants): an ISV through one of
 * its API keys, an MSP through its tenant's own key (`sk_msp_...`), or internal tooling with the admin
 * token (GraphQL only). Code outside src/access asks the helpers below instead of branching on the kind.
 */
export type Caller =
  | { kind: 'isv'; isvId: string; apiKeyId: string; keyPrefix?: string; person?: CallerPerson }
  | { kind: 'msp'; tenantId: string; apiKeyId: string; keyPrefix?: string; person?: CallerPerson }
  | { kind: 'admin' };

/**
 * The person behind a caller (a console session signed in by a person acts as its organisation's caller
 * with `person` set): the audit log then names the person, not the key, as the actor.
 */
export interface CallerPerson { id: string; email: string }

/** Who made a decision, as every audit entry names them (docs/architecture.md, Connect sessions and console). */
export interface AuditActor {
  kind: 'person' | 'isv_key' | 'msp_key' | 'operator' | 'system';
  id: string;
  email?: string;
  key_prefix?: string;
}

/** The actor of a caller's decisions: its person when one is signed in, else its key, else the operator. */
export function actorOf(caller: Caller): AuditActor {
  if (caller.kind === 'admin') return { kind: 'operator', id: 'admin_token' };
  if (caller.person) return { kind: 'person', id: caller.person.id, email: caller.person.email };
  return { kind: caller.kind === 'isv' ? 'isv_key' : 'msp_key', id: caller.apiKeyId, ...(caller.keyPrefix ? { key_prefix: caller.keyPrefix } : {}) };
}

/** The person behind a caller (a console session), or null for a bare key or the admin token. */
export function personOf(caller: Caller): CallerPerson | null {
  return caller.kind === 'admin' ? null : caller.person ?? null;
}

/** How a page names an actor recorded in the audit log: the person's email, else the kind of actor. */
export function actorLabel(actor: Partial<Pick<AuditActor, 'kind' | 'email'>> | undefined): string {
  return actor?.kind === 'person' && actor.email ? actor.email : actor?.kind ?? 'someone';
}

export type CallerKind = Caller['kind'];

/**
 * The grant keys, one name each; nothing outside src/access spells a key as a string. The first six
 * are the interface document's; the others are ours, each off until the MSP turns it on.
 */
export const Grant = {
  TicketCreate: 'psa.ticket.create',
  TicketUpdate: 'psa.ticket.update',
  TicketEvents: 'psa.ticket.events',
  DeviceEvents: 'rmm.device.events',
  CompanyEvents: 'psa.company.events',
  CompanyCreate: 'psa.company.create',
  DeviceWrite: 'rmm.device.write',
  TicketAutoClose: 'psa.ticket.auto_close',
  TimeCreate: 'psa.time.create',
  AgreementWrite: 'psa.agreement.write',
  ProjectWrite: 'psa.project.write',
  DistributorCompanyCreate: 'distributor.company.create',
  CostSubmit: 'billing.cost.submit',
} as const;
export type GrantKey = (typeof Grant)[keyof typeof Grant];

export const GRANT_KEYS = Object.values(Grant) as [GrantKey, ...GrantKey[]];

export function isGrantKey(value: string): value is GrantKey {
  return (GRANT_KEYS as readonly string[]).includes(value);
}

/** The ISV an ISV caller is; null for an MSP key or the admin token. */
export function isvOfCaller(caller: Caller): string | null {
  return caller.kind === 'isv' ? caller.isvId : null;
}

/** Whether the caller is the tenant's own MSP key (its decisions are recorded as the MSP's). */
export function isMspCaller(caller: Caller): caller is Extract<Caller, { kind: 'msp' }> {
  return caller.kind === 'msp';
}

/** The tenant of an MSP caller; null for an ISV key or the admin token. */
export function mspTenantOf(caller: Caller): string | null {
  return caller.kind === 'msp' ? caller.tenantId : null;
}

/** Whether the caller is the MSP key of this tenant. */
export function isMspOf(caller: Caller, tenantId: string): boolean {
  return caller.kind === 'msp' && caller.tenantId === tenantId;
}

/** Whether the caller is internal tooling (the admin token): its reads of tenant data are audited as `admin.read`. */
export function isAdminCaller(caller: Caller): boolean {
  return caller.kind === 'admin';
}

/** Who a value issued to this caller belongs to (a list's cursor): the key's ISV, the MSP's tenant, or the admin. */
export function principalOf(caller: Caller): string {
  return caller.kind === 'isv' ? `isv:${caller.isvId}` : caller.kind === 'msp' ? `msp:${caller.tenantId}` : 'admin';
}

/** The API key a caller came with (per-key limits, audit); null for the admin token. */
export function apiKeyOf(caller: Caller): string | null {
  return caller.kind === 'admin' ? null : caller.apiKeyId;
}

/**
 * The caller a write made on an ISV's behalf runs as: the ISV itself, or, for the tenant's MSP key
 * deciding on that ISV's book (identity import), the ISV with the MSP's key recorded.
 */
export function actingAsIsv(caller: Caller, isvId: string): Caller {
  return caller.kind === 'msp' ? { kind: 'isv', isvId, apiKeyId: caller.apiKeyId, keyPrefix: caller.keyPrefix, person: caller.person } : caller;
}
