/**
 * Each grant key in plain words, as the console offers it on a connection (which keys a connection
 * offers is src/access's rule, `grantKeysFor`; this file only says what each one lets an ISV do).
 */
import { Grant, type GrantKey } from '../access/caller';

export const GRANT_WORDS: Record<GrantKey, { title: string; words: string }> = {
  [Grant.TicketCreate]: { title: 'Create tickets', words: 'Open new service tickets in your PSA (for example when it detects a problem).' },
  [Grant.TicketUpdate]: { title: 'Update its tickets', words: 'Add notes to, change, close and reopen the tickets it created.' },
  [Grant.TicketEvents]: { title: 'Ticket changes', words: 'Be told when someone at your MSP changes, closes or reopens its tickets.' },
  [Grant.DeviceEvents]: { title: 'Device changes', words: 'Be told when a device in your RMM goes offline, comes back or changes.' },
  [Grant.CompanyEvents]: { title: 'Company changes', words: 'Be told when a company in your PSA is added, renamed or removed.' },
  [Grant.CompanyCreate]: { title: 'Find companies', words: 'Look up a PSA company by name; it never creates a company your PSA does not have.' },
  [Grant.DeviceWrite]: { title: 'Run on devices', words: 'Deploy software packages to your devices through the RMM. Off unless you turn it on.' },
  [Grant.TicketAutoClose]: { title: 'Close fixed tickets', words: 'Close its own ticket when the problem it reported is fixed.' },
  [Grant.TimeCreate]: { title: 'Log time', words: 'Record hours worked on tickets it created.' },
  [Grant.AgreementWrite]: { title: 'Change agreement lines', words: 'Add, change or end lines on your existing agreements; never creates an agreement.' },
  [Grant.ProjectWrite]: { title: 'Write to projects', words: 'Add notes and items to your existing projects; never creates a project.' },
  [Grant.DistributorCompanyCreate]: { title: 'Create distributor companies', words: 'Create a company at your distributor when none matches.' },
  [Grant.CostSubmit]: { title: 'Report usage and costs', words: 'Send what it delivered to each customer, so you see charges and the reconciliation.' },
};
