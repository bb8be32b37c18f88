/**
 * What each grant key lets an ISV do, in plain words for a person at the MSP (the connect page and the
 * console show the same words), which keys are on by default when an MSP connects, and which connector
 * capability each key rests on, so that a missing vendor permission turns off exactly the grants it breaks
 * (docs/architecture.md, Tenancy, keys and grants). Which keys a connection offers is `grantKeysFor`.
 */
import type { Connection } from '../../entities';
import type { PermissionCapability } from '../connectors/capabilities';
import { Grant, type GrantKey } from './caller';

export const GRANT_WORDS: Record<GrantKey, { title: string; words: string }> = {
  [Grant.TicketCreate]: { title: 'Create tickets in your PSA', words: 'Open new service tickets (for example when it detects a problem).' },
  [Grant.TicketUpdate]: { title: 'Update tickets it created in your PSA', words: 'Add notes to, change, close and reopen the tickets it created.' },
  [Grant.TicketEvents]: { title: 'See when tickets change in your PSA', words: 'Be told when someone at your MSP changes, closes or reopens its tickets.' },
  [Grant.DeviceEvents]: { title: 'See when devices change in your RMM', words: 'Be told when a device goes offline, comes back or changes.' },
  [Grant.CompanyEvents]: { title: 'See when companies change in your PSA', words: 'Be told when a company is added, renamed or removed.' },
  [Grant.CompanyCreate]: { title: 'Find companies in your PSA', words: 'Look up a PSA company by name (and create it at your distributor where you allow that); it never creates a company your PSA does not have.' },
  [Grant.DeviceWrite]: { title: 'Run install scripts on your devices through your RMM', words: 'Deploy software packages to your devices. Off unless you turn it on.' },
  [Grant.TicketAutoClose]: { title: 'Close its tickets by itself when a finding is fixed', words: 'Close its own ticket when the problem it reported is fixed.' },
  [Grant.TimeCreate]: { title: 'Log time on tickets it created', words: 'Record hours worked on the tickets it created.' },
  [Grant.AgreementWrite]: { title: 'Change line items on your existing agreements', words: 'Add, change or end lines on your existing agreements; it never creates an agreement.' },
  [Grant.ProjectWrite]: { title: 'Add notes and items to your existing projects', words: 'It never creates a project.' },
  [Grant.DistributorCompanyCreate]: { title: 'Create companies at your distributor', words: 'Create a company at your distributor when none matches.' },
  [Grant.CostSubmit]: { title: 'Send you its costs for billing reconciliation', words: 'Report what it delivered to each customer, so you see charges and the reconciliation.' },
};

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
