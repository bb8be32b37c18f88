/**
 * The grants as the connect page explains them to a person at the MSP, which are on by default (the
 * interface document's keys, except device write and company create, which it keeps off until the MSP
 * turns them on; every key of ours is off too), and which connector capability each one rests on, so
 * that a missing vendor permission turns off exactly the grants it breaks.
 */
import type { Connection } from '../../entities';
import { Grant, type GrantKey } from '../access/caller';
import type { PermissionCapability } from '../connectors/capabilities';

export const GRANT_WORDS: Record<GrantKey, string> = {
  [Grant.TicketCreate]: 'Create tickets in your PSA',
  [Grant.TicketUpdate]: 'Update tickets it created in your PSA (status, notes, closing)',
  [Grant.TicketEvents]: 'See when tickets change in your PSA',
  [Grant.DeviceEvents]: 'See when devices change in your RMM',
  [Grant.CompanyEvents]: 'See when companies change in your PSA',
  [Grant.CompanyCreate]: 'Find or create companies in your PSA (it never creates an unmatched one)',
  [Grant.DeviceWrite]: 'Run install scripts on your devices through your RMM',
  [Grant.TicketAutoClose]: 'Close its tickets by itself when a finding is fixed',
  [Grant.TimeCreate]: 'Log time on tickets it created',
  [Grant.AgreementWrite]: 'Change line items on your existing agreements',
  [Grant.ProjectWrite]: 'Add notes and items to your existing projects',
  [Grant.DistributorCompanyCreate]: 'Create companies at your distributor',
  [Grant.CostSubmit]: 'Send you its costs for billing reconciliation',
};

/** On unless the MSP unticks them: the interface's keys it does not keep off by default. */
export const ON_BY_DEFAULT: ReadonlySet<GrantKey> = new Set([Grant.TicketCreate, Grant.TicketUpdate, Grant.TicketEvents, Grant.DeviceEvents, Grant.CompanyEvents]);

/** The connector capability a grant needs on a connection of each kind (null: reading is enough). */
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
