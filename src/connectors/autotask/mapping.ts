/** Autotask native records -> canonical record fields. `native` is always handed back untouched. */
import { canonicalPriority, canonicalStatus, parseVendorTime } from '../canonical';
import type { FetchedRecord } from '../types';
import type { Native, PicklistValue } from './client';

/** Autotask's Tickets.status value for "Complete" (system status; closes the ticket). */
export const COMPLETE_STATUS = '5';

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const idOf = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));

/** Autotask returns UTC times, sometimes without a zone designator; read those as UTC. */
export function autotaskTime(v: unknown): Date | null {
  if (typeof v === 'string' && /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v)) return parseVendorTime(`${v}Z`);
  return parseVendorTime(v);
}

/** 'YYYY-MM-DD' of an Autotask date (stored as midnight UTC). */
export function autotaskDate(v: unknown): string | null {
  const d = autotaskTime(v);
  return d ? d.toISOString().slice(0, 10) : null;
}

export function mapBoard(p: PicklistValue): FetchedRecord<'boards'> {
  return { sourceId: String(p.value), native: p, vendorUpdatedAt: null, fields: { name: p.label, active: p.isActive ?? null } };
}

export function mapStatus(p: PicklistValue, mapping: Record<string, string>): FetchedRecord<'statuses'> {
  const closed = String(p.value) === COMPLETE_STATUS;
  return {
    sourceId: String(p.value),
    native: p,
    vendorUpdatedAt: null,
    fields: {
      name: p.label,
      // Autotask statuses are not per queue.
      boardSourceId: null,
      closed,
      canonical: canonicalStatus(mapping, p.label, closed),
      sortOrder: num(p.sortOrder),
    },
  };
}

export function mapPriority(p: PicklistValue): FetchedRecord<'priorities'> {
  return {
    sourceId: String(p.value),
    native: p,
    vendorUpdatedAt: null,
    fields: { name: p.label, canonical: canonicalPriority(p.label), sortOrder: num(p.sortOrder) },
  };
}

export function mapMember(n: Native): FetchedRecord<'members'> {
  const name = [str(n.firstName), str(n.lastName)].filter(Boolean).join(' ');
  return {
    sourceId: String(n.id),
    native: n,
    // Resources carry no last-modified time.
    vendorUpdatedAt: null,
    fields: {
      // TimeEntries.resourceID takes the resource id.
      memberRef: String(n.id),
      displayName: name || str(n.userName) || String(n.id),
      active: typeof n.isActive === 'boolean' ? n.isActive : null,
      email: str(n.email),
    },
  };
}

export function mapCompany(n: Native): FetchedRecord<'companies'> {
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: autotaskTime(n.lastActivityDate),
    fields: { name: str(n.companyName) ?? '', identifier: str(n.companyNumber) },
  };
}

export function mapContact(n: Native): FetchedRecord<'contacts'> {
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: autotaskTime(n.lastModifiedDate) ?? autotaskTime(n.lastActivityDate),
    fields: {
      firstName: str(n.firstName),
      lastName: str(n.lastName),
      email: str(n.emailAddress),
      phone: str(n.phone) ?? str(n.mobilePhone),
      companySourceId: idOf(n.companyID),
    },
  };
}

export interface TicketLookups {
  statuses: Map<string, PicklistValue>;
  priorities: Map<string, PicklistValue>;
  queues: Map<string, PicklistValue>;
  ticketTypes: Map<string, PicklistValue>;
  companyNames: Map<string, string>;
  noteCounts: Map<string, number>;
  statusMapping: Record<string, string>;
}

export function mapTicket(n: Native, l: TicketLookups): FetchedRecord<'tickets'> {
  const statusId = idOf(n.status);
  const priorityId = idOf(n.priority);
  const queueId = idOf(n.queueID);
  const companyId = idOf(n.companyID);
  const nativeStatus = statusId ? l.statuses.get(statusId)?.label ?? null : null;
  const nativePriority = priorityId ? l.priorities.get(priorityId)?.label ?? null : null;
  const closed = statusId === COMPLETE_STATUS;
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: autotaskTime(n.lastActivityDate),
    fields: {
      summary: str(n.title) ?? '',
      description: str(n.description),
      status: canonicalStatus(l.statusMapping, nativeStatus, closed),
      nativeStatus,
      statusSourceId: statusId,
      priority: canonicalPriority(nativePriority),
      nativePriority,
      prioritySourceId: priorityId,
      boardSourceId: queueId,
      boardName: queueId ? l.queues.get(queueId)?.label ?? null : null,
      companyName: companyId ? l.companyNames.get(companyId) ?? null : null,
      companySourceId: companyId,
      projectSourceId: idOf(n.projectID),
      // Autotask's ticket type (Service Request, Incident, Problem, Change Request, Alert).
      recordType: n.ticketType != null ? l.ticketTypes.get(String(n.ticketType))?.label ?? null : null,
      closed,
      noteCount: l.noteCounts.get(String(n.id)) ?? 0,
      openedAt: autotaskTime(n.createDate),
      closedAt: autotaskTime(n.completedDate),
    },
  };
}

export interface ProjectLookups {
  statuses: Map<string, PicklistValue>;
  types: Map<string, PicklistValue>;
  companyNames: Map<string, string>;
}

export function mapProject(n: Native, l: ProjectLookups): FetchedRecord<'projects'> {
  const companyId = idOf(n.companyID);
  const type = n.projectType != null ? l.types.get(String(n.projectType))?.label ?? '' : '';
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: autotaskTime(n.lastActivityDateTime),
    fields: {
      name: str(n.projectName) ?? '',
      status: n.status != null ? l.statuses.get(String(n.status))?.label ?? null : null,
      companyName: companyId ? l.companyNames.get(companyId) ?? null : null,
      companySourceId: companyId,
      // Autotask marks plans by projectType (picklist Proposal, Template, Baseline, Archived, Client,
      // Internal): Template and Baseline projects take no notes or tasks (see project-writer.ts).
      baseline: /baseline|template/i.test(type),
    },
  };
}

const CYCLES: [RegExp, string, number][] = [
  [/semi/i, 'semiannual', 6],
  [/month/i, 'monthly', 1],
  [/quarter/i, 'quarterly', 3],
  [/year|annual/i, 'annual', 12],
];

/** Canonical billing cycle and its length in months, from a contract period label. */
export function billingCycle(label: string | null | undefined): { cycle: string; months: number | null } {
  for (const [re, cycle, months] of CYCLES) if (label && re.test(label)) return { cycle, months };
  return { cycle: 'unknown', months: null };
}

export interface AgreementLookups {
  periodTypes: Map<string, PicklistValue>;
  companyNames: Map<string, string>;
  /** Current billing-period ContractServiceUnits rows, by contract id. */
  currentUnits: Map<string, Native[]>;
}

export function mapAgreement(n: Native, l: AgreementLookups): FetchedRecord<'agreements'> {
  const companyId = idOf(n.companyID);
  const { cycle, months } = billingCycle(n.contractPeriodType != null ? l.periodTypes.get(String(n.contractPeriodType))?.label : null);
  const units = l.currentUnits.get(String(n.id)) ?? [];
  // Recurring revenue: this period's billed price of every service, per month of the period.
  const mrr = months && units.length ? Math.round((units.reduce((s, u) => s + (num(u.price) ?? 0), 0) / months) * 100) / 100 : null;
  return {
    sourceId: String(n.id),
    native: n,
    // Contracts carry no last-modified time.
    vendorUpdatedAt: null,
    fields: {
      name: str(n.contractName) ?? '',
      // Contracts.status: 1 active, 0 inactive.
      status: n.status === 1 ? 'active' : n.status === 0 ? 'inactive' : 'unknown',
      billingCycle: cycle,
      companyName: companyId ? l.companyNames.get(companyId) ?? null : null,
      companySourceId: companyId,
      startDate: autotaskDate(n.startDate),
      endDate: autotaskDate(n.endDate),
      monthlyRecurringRevenue: mrr,
    },
  };
}

export interface AgreementLineLookups {
  serviceNames: Map<string, string>;
  /** ContractServiceUnits rows by contract service id. */
  units: Map<string, Native[]>;
  now: number;
}

/** Whether a ContractServiceUnits row's billing period covers `now` (endDate is its last day). */
export function isCurrentPeriod(row: Native, now: number): boolean {
  const start = autotaskTime(row.startDate)?.getTime();
  const end = autotaskTime(row.endDate)?.getTime();
  return start != null && end != null && start <= now && now < end + 86_400_000;
}

/** The unit row of the period covering `now`, else the latest one. */
export function currentUnitRow(rows: Native[], now: number): Native | null {
  let latest: Native | null = null;
  for (const r of rows) {
    if (isCurrentPeriod(r, now)) return r;
    if (!latest || (autotaskTime(r.endDate)?.getTime() ?? 0) > (autotaskTime(latest.endDate)?.getTime() ?? 0)) latest = r;
  }
  return latest;
}

export function mapAgreementLine(n: Native, l: AgreementLineLookups): FetchedRecord<'agreement_lines'> {
  const rows = l.units.get(String(n.id)) ?? [];
  const current = currentUnitRow(rows, l.now);
  const starts = rows.map((r) => autotaskDate(r.startDate)).filter((d): d is string => !!d).sort();
  // A service is ended in Autotask by adjusting its units to zero (ContractServiceAdjustments): periods
  // of zero units after the last billed one are not part of the line.
  const billed = rows.filter((r) => num(r.units) !== 0);
  const ends = (billed.length ? billed : rows).map((r) => autotaskDate(r.endDate)).filter((d): d is string => !!d).sort();
  const serviceId = idOf(n.serviceID);
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: null,
    fields: {
      agreementSourceId: String(n.contractID),
      productName: serviceId ? l.serviceNames.get(serviceId) ?? null : null,
      productSourceId: serviceId,
      // ContractServices hold no quantity; the units of the current period are in ContractServiceUnits.
      quantity: current ? num(current.units) : null,
      unitCost: num(n.unitCost),
      // adjustedPrice is the contract's price for the service when it differs from the list price.
      unitPrice: num(n.adjustedPrice) ?? num(n.unitPrice),
      effectiveStart: starts[0] ?? null,
      effectiveEnd: ends[ends.length - 1] ?? null,
    },
  };
}

/**
 * A Services row: the recurring services contracts bill (ContractServices.serviceID points here), so
 * they are the products of an Autotask agreement line. Services have no product code of their own.
 */
export function mapService(n: Native): FetchedRecord<'products'> {
  return {
    sourceId: String(n.id),
    native: n,
    vendorUpdatedAt: autotaskTime(n.lastModifiedDate),
    fields: {
      name: str(n.name) ?? '',
      sku: null,
      unitPrice: num(n.unitPrice),
      unitCost: num(n.unitCost),
      active: typeof n.isActive === 'boolean' ? n.isActive : null,
    },
  };
}
