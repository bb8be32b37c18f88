/**
 * The one table of grant words (docs/architecture.md, Tenancy, keys and grants): what each grant key lets
 * an ISV do, in plain words for a person at the MSP. The connect page, the console's grants page and the
 * REST descriptions of grant keys all read it, and nothing else spells a grant's title. Beside it: which
 * keys are on by default when an MSP connects, which connector capability each key rests on, and which
 * key another depends on, so that a missing vendor permission turns off exactly the grants it breaks and
 * the ones that follow from them (`blockedKeys`), on the connect page and in the console alike.
 * Which keys a connection offers is `grantKeysFor`.
 */
import type { Connection } from '../../entities';
import type { PermissionCapability } from '../connectors/capabilities';
import { grantKeysFor } from './access.service';
import { Grant, GRANT_KEYS, type GrantKey } from './caller';

export const GRANT_WORDS: Record<GrantKey, { title: string; words: string }> = {
  [Grant.TicketCreate]: { title: 'Create tickets in your PSA', words: 'Open new service tickets (for example when it detects a problem).' },
  [Grant.TicketUpdate]: { title: 'Update tickets it created in your PSA', words: 'Add notes to, change, close and reopen the tickets it created.' },
  [Grant.TicketEvents]: { title: 'See when tickets change in your PSA', words: 'Be told when someone at your MSP changes, closes or reopens its tickets.' },
  [Grant.DeviceEvents]: { title: 'See when devices change in your RMM', words: 'Be told when a device goes offline, comes back or changes.' },
  [Grant.CompanyEvents]: { title: 'See when companies change in your PSA', words: 'Be told when a company is added, renamed or removed.' },
  [Grant.CompanyCreate]: { title: 'Match its new customers to your PSA companies', words: 'Ask for a company by name: it is matched to one of your PSA companies and the match is kept. A company your PSA does not have is never created there. It also lets it move its tickets to another company.' },
  [Grant.DeviceWrite]: { title: 'Run install scripts on your devices through your RMM', words: 'Deploy software packages to your devices.' },
  [Grant.TicketAutoClose]: { title: 'Close its tickets by itself when a finding is fixed', words: 'Close its own ticket when the problem it reported is fixed.' },
  [Grant.TimeCreate]: { title: 'Log time on tickets it created', words: 'Record hours worked on the tickets it created.' },
  [Grant.AgreementWrite]: { title: 'Change line items on your existing agreements', words: 'Add, change or end lines on your existing agreements; it never creates an agreement.' },
  [Grant.ProjectWrite]: { title: 'Add notes and items to your existing projects', words: 'Add notes and items to projects you already have; it never creates a project.' },
  [Grant.DistributorCompanyCreate]: { title: 'Create companies at your distributor', words: 'Create a company at your distributor when none matches.' },
  [Grant.CostSubmit]: { title: 'Send you its costs for billing reconciliation', words: 'Report what it delivered to each customer, so you see charges and the reconciliation.' },
};

/** A grant key with its title, for REST descriptions: `psa.ticket.create` (Create tickets in your PSA). */
export function grantKeyList(keys: readonly GrantKey[] = GRANT_KEYS): string {
  return keys.map((k) => `\`${k}\` (${GRANT_WORDS[k].title})`).join(', ');
}

/** On unless the MSP unticks them when it connects: the interface's keys it does not keep off by default. */
export const ON_BY_DEFAULT: ReadonlySet<GrantKey> = new Set([Grant.TicketCreate, Grant.TicketUpdate, Grant.TicketEvents, Grant.DeviceEvents, Grant.CompanyEvents]);

/** The connector capability a grant needs on a connection of each kind ('read': reading is enough). */
export function capabilityOf(key: GrantKey, kind: Connection['kind']): PermissionCapability {
  switch (key) {
    case Grant.TicketCreate: return 'ticket.create';
    case Grant.TicketUpdate: case Grant.TicketAutoClose: return 'ticket.update';
    case Grant.TimeCreate: return 'time.create';
    case Grant.ProjectWrite: return 'project.write';
    case Grant.DeviceWrite: return 'device.deploy';
    case Grant.DistributorCompanyCreate: return 'company.create';
    case Grant.AgreementWrite: return kind === 'psa' ? 'charge.approve' : 'read';
    default: return 'read';
  }
}

/**
 * Grants that act on what another grant makes: without ticket create there are no tickets it created to
 * update, close or log time on. A key whose prerequisite a vendor permission rules out is ruled out too.
 */
export const DEPENDS_ON: Readonly<Partial<Record<GrantKey, GrantKey>>> = {
  [Grant.TicketUpdate]: Grant.TicketCreate,
  [Grant.TicketAutoClose]: Grant.TicketUpdate,
  [Grant.TimeCreate]: Grant.TicketCreate,
};

/** A vendor permission a connection was found to lack, in the vendor's own terms. */
export interface PermissionGapLike { capability: string; vendorTerms: string }

/** Why a grant cannot work on a connection: the permissions it needs, and the grant it follows from (if that is the one ruled out). */
export interface Blocked<P extends PermissionGapLike = PermissionGapLike> { needs: P[]; through: GrantKey | null }

/**
 * The grants of a kind's connection that cannot work given the vendor permissions it lacks: each key
 * whose capability (or reading itself) is missing, then each key that depends on one of those.
 */
export function blockedKeys<P extends PermissionGapLike>(kind: Connection['kind'], missing: readonly P[]): Map<GrantKey, Blocked<P>> {
  const out = new Map<GrantKey, Blocked<P>>();
  if (!missing.length) return out;
  const keys = grantKeysFor(kind);
  for (const key of keys) {
    const cap = capabilityOf(key, kind);
    const needs = missing.filter((p) => p.capability === cap || p.capability === 'read');
    if (needs.length) out.set(key, { needs, through: null });
  }
  // Prerequisites first: a chain (auto close -> update -> create) settles in as many rounds as it is long.
  for (let changed = true; changed;) {
    changed = false;
    for (const key of keys) {
      const before = DEPENDS_ON[key];
      if (!before || out.has(key) || !out.has(before)) continue;
      out.set(key, { needs: out.get(before)!.needs, through: before });
      changed = true;
    }
  }
  return out;
}

/** Why a grant is off, in words: the vendor's permission it needs, or the grant it follows from and that one's. */
export function offBecause(b: Blocked, system: string): string {
  const perms = [...new Set(b.needs.map((p) => `“${p.vendorTerms}”`))].join(' and ');
  return b.through
    ? `Off: it needs “${GRANT_WORDS[b.through].title}”, which needs ${perms} in ${system}.`
    : `Off: needs ${perms} in ${system}.`;
}
