/**
 * BMS native records -> canonical fields. BMS names: Account = company (AccountSummaryOutputDto), Contact,
 * Employee = member, Queue = board, Contract = agreement (ClientContractSummaryOutputDto), Service = product
 * (ServiceLookupOutputDto), Project (ProjectsListSummaryOutputDto).
 */
import { canonicalPriority, canonicalStatus } from '../canonical';
import type { RecordFieldsByResource } from '../types';
import { parseBmsTime, type BmsRecord } from './client';

/**
 * A status whose `TypeId` is 3 is a completed one. BMS's document gives StatusLookupOutputDto a `TypeId`
 * without naming its values; 3 is the sandbox's "Completed" basic status, and a ticket also counts as
 * closed when BMS stamps its `CompletedDate`.
 */
export const BMS_COMPLETED_STATUS_TYPE = 3;

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const idStr = (v: unknown): string | null => (typeof v === 'number' && v > 0 ? String(v) : str(v));
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const dateOnly = (v: unknown): string | null => parseBmsTime(v)?.toISOString().slice(0, 10) ?? null;
/** The entries of a list member that are objects (a null or malformed entry is passed over). */
const objects = (v: unknown): BmsRecord[] => (Array.isArray(v) ? v.filter((x): x is BmsRecord => !!x && typeof x === 'object' && !Array.isArray(x)) : []);

/** Statuses by id, read once per sync: whether each completes a ticket. */
export interface BmsStatuses { completes(id: unknown): boolean }

export function statusIndex(statuses: BmsRecord[]): BmsStatuses {
  const done = new Set(statuses.filter((s) => s.TypeId === BMS_COMPLETED_STATUS_TYPE).map((s) => Number(s.Id)));
  return { completes: (id) => done.has(Number(id)) };
}

export function ticketFields(t: BmsRecord, statuses: BmsStatuses, statusMapping: Record<string, string>): RecordFieldsByResource['tickets'] {
  const nativeStatus = str(t.StatusName);
  const closedFlag = statuses.completes(t.StatusId) || t.CompletedDate != null;
  const status = canonicalStatus(statusMapping, nativeStatus, closedFlag);
  const closed = closedFlag || status === 'closed';
  return {
    summary: typeof t.Title === 'string' ? t.Title : '',
    description: str(t.Details),
    status,
    nativeStatus,
    statusSourceId: idStr(t.StatusId),
    priority: canonicalPriority(str(t.PriorityName)),
    nativePriority: str(t.PriorityName),
    prioritySourceId: idStr(t.PriorityId),
    boardSourceId: idStr(t.QueueId),
    boardName: str(t.QueueName),
    companyName: str(t.AccountName),
    companySourceId: idStr(t.AccountId),
    projectSourceId: null,
    recordType: str(t.TypeName) ?? 'Ticket',
    closed,
    // The ticket list carries no note count; notes are read per ticket.
    noteCount: 0,
    openedAt: parseBmsTime(t.OpenDate) ?? parseBmsTime(t.CreatedOn),
    closedAt: closed ? parseBmsTime(t.CompletedDate) : null,
  };
}

export function companyFields(a: BmsRecord): RecordFieldsByResource['companies'] {
  return { name: str(a.AccountName) ?? '', identifier: str(a.AccountCode) };
}

export function contactFields(c: BmsRecord): RecordFieldsByResource['contacts'] {
  const emails = objects(c.Emails);
  const phones = objects(c.Phones);
  const email = emails.find((e) => e.IsDefault) ?? emails[0];
  const phone = phones.find((p) => p.IsDefault) ?? phones[0];
  return {
    firstName: str(c.FirstName), lastName: str(c.LastName), email: str(email?.EmailAddress), phone: str(phone?.Phone),
    companySourceId: idStr(c.AccountId),
  };
}

/** EmployeeLookupOutputDto has an id and a name only; BMS's lookup lists active employees. */
export function memberFields(e: BmsRecord): RecordFieldsByResource['members'] {
  return { memberRef: String(e.Id), displayName: str(e.Name) ?? `Employee ${e.Id}`, active: true, email: null };
}

export function boardFields(q: BmsRecord): RecordFieldsByResource['boards'] {
  return { name: str(q.Name) ?? `Queue ${q.Id}`, active: typeof q.IsActive === 'boolean' ? q.IsActive : null };
}

export function statusFields(s: BmsRecord, statusMapping: Record<string, string>): RecordFieldsByResource['statuses'] {
  const closed = s.TypeId === BMS_COMPLETED_STATUS_TYPE;
  return {
    name: str(s.Name) ?? `Status ${s.Id}`, boardSourceId: null, closed, canonical: canonicalStatus(statusMapping, str(s.Name), closed),
    sortOrder: num(s.StatusOrder),
  };
}

export function priorityFields(p: BmsRecord, order: number): RecordFieldsByResource['priorities'] {
  return { name: str(p.Name) ?? `Priority ${p.Id}`, canonical: canonicalPriority(str(p.Name)), sortOrder: order };
}

/** BMS billing cycle names -> our cycle, with its length in months (for MRR). */
const BILLING_CYCLES: Record<string, { cycle: string; months: number }> = {
  weekly: { cycle: 'weekly', months: 12 / 52 }, monthly: { cycle: 'monthly', months: 1 }, quarterly: { cycle: 'quarterly', months: 3 },
  'semi-annually': { cycle: 'semiannual', months: 6 }, annually: { cycle: 'annual', months: 12 }, yearly: { cycle: 'annual', months: 12 },
};

/** A contract; the summary names its account only by name, so `accountIds` (name -> id, from the accounts) gives the company. */
export function agreementFields(c: BmsRecord, accountIds: ReadonlyMap<string, string>): RecordFieldsByResource['agreements'] {
  const cycle = typeof c.BillingCycle === 'string' ? c.BillingCycle.toLowerCase() : '';
  const period = Object.hasOwn(BILLING_CYCLES, cycle) ? BILLING_CYCLES[cycle] : undefined;
  const price = num(c.ContractBillingPrice);
  const status = typeof c.Status === 'string' ? c.Status.toLowerCase() : '';
  return {
    name: str(c.ContractName) ?? str(c.ContractNumber) ?? `Contract ${c.Id}`,
    status: ['active', 'inactive', 'expired', 'cancelled'].includes(status) ? status : 'unknown',
    billingCycle: period?.cycle ?? 'unknown',
    companyName: str(c.AccountName),
    companySourceId: (str(c.AccountName) && accountIds.get(c.AccountName)) || null,
    startDate: dateOnly(c.StartDate),
    endDate: dateOnly(c.EndDate),
    monthlyRecurringRevenue: period && price != null ? Math.round((price / period.months) * 100) / 100 : null,
  };
}

/** ServiceLookupOutputDto names a service without its price (BMS's lookup carries Id, Name and Description only). */
export function productFields(s: BmsRecord): RecordFieldsByResource['products'] {
  return { name: str(s.Name) ?? `Service ${s.Id}`, sku: null, unitPrice: null, unitCost: null, active: true };
}

/** ProjectsListSummaryOutputDto names no account; BMS has no baseline projects. */
export function projectFields(p: BmsRecord): RecordFieldsByResource['projects'] {
  return { name: str(p.Name) ?? `Project ${p.Id}`, status: str(p.StatusName), companyName: null, companySourceId: null, baseline: false };
}
