/**
 * Halo native records -> canonical fields. Halo names: Client = company, Users = contacts (end
 * users), Team = board, ClientContract = agreement, recurring-invoice lines = agreement lines.
 */
import { canonicalPriority, canonicalStatus } from '../canonical';
import type { RecordFieldsByResource } from '../types';
import { parseHaloTime, type HaloRecord } from './client';

/** Halo's built-in Closed status; the only status that closes a ticket. */
export const HALO_CLOSED_STATUS_ID = 9;

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const idStr = (v: unknown): string | null => (typeof v === 'number' && v > 0 ? String(v) : str(v));
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** 'YYYY-MM-DD' of a Halo date, or null (Halo writes 1900-01-01 for none). */
function dateOnly(v: unknown): string | null {
  const d = parseHaloTime(v);
  return d ? d.toISOString().slice(0, 10) : null;
}

/** Statuses and priorities, fetched once per sync to name what tickets carry only as ids. */
export interface HaloLookups {
  statusName(id: unknown): string | null;
  priorityName(slaId: unknown, priorityId: unknown): string | null;
}

export function buildLookups(statuses: HaloRecord[], priorities: HaloRecord[]): HaloLookups {
  const statusById = new Map(statuses.map((s) => [Number(s.id), str(s.name)]));
  // A priority is a policy of an SLA: `priorityid` is what tickets carry, within their `sla_id`.
  const bySlaAndId = new Map(priorities.map((p) => [`${p.slaid}/${p.priorityid}`, str(p.name)]));
  const byId = new Map<number, string | null>();
  for (const p of priorities) if (!byId.has(Number(p.priorityid))) byId.set(Number(p.priorityid), str(p.name));
  return {
    statusName: (id) => statusById.get(Number(id)) ?? null,
    priorityName: (slaId, priorityId) =>
      bySlaAndId.get(`${slaId}/${priorityId}`) ?? byId.get(Number(priorityId)) ?? null,
  };
}

export function ticketFields(t: HaloRecord, lookups: HaloLookups, statusMapping: Record<string, string>): RecordFieldsByResource['tickets'] {
  const nativeStatus = lookups.statusName(t.status_id);
  const status = canonicalStatus(statusMapping, nativeStatus, t.status_id === HALO_CLOSED_STATUS_ID);
  const closed = t.status_id === HALO_CLOSED_STATUS_ID || status === 'closed';
  const nativePriority = lookups.priorityName(t.sla_id, t.priority_id);
  return {
    summary: typeof t.summary === 'string' ? t.summary : '',
    description: str(t.details),
    status,
    nativeStatus,
    statusSourceId: idStr(t.status_id),
    priority: canonicalPriority(nativePriority),
    nativePriority,
    prioritySourceId: idStr(t.priority_id),
    // Halo tickets name their team but do not carry its id.
    boardSourceId: null,
    boardName: str(t.team),
    companyName: str(t.client_name),
    companySourceId: idStr(t.client_id),
    projectSourceId: null,
    recordType: t.is_project === true ? 'Project' : 'Ticket',
    closed,
    // Halo's list of tickets carries no action count; notes are read per ticket when needed.
    noteCount: 0,
    openedAt: parseHaloTime(t.dateoccurred),
    closedAt: closed ? parseHaloTime(t.dateclosed) : null,
  };
}

/** The baseline project is the one locked in Halo (Faults.locked): it takes no writes. */
export function projectFields(p: HaloRecord, lookups: HaloLookups): RecordFieldsByResource['projects'] {
  return {
    name: typeof p.summary === 'string' ? p.summary : `Project ${p.id}`,
    status: lookups.statusName(p.status_id),
    companyName: str(p.client_name),
    companySourceId: idStr(p.client_id),
    baseline: p.locked === true,
  };
}

export function companyFields(c: HaloRecord): RecordFieldsByResource['companies'] {
  return { name: typeof c.name === 'string' ? c.name : '', identifier: str(c.ref) };
}

export function contactFields(u: HaloRecord): RecordFieldsByResource['contacts'] {
  return {
    firstName: str(u.firstname),
    lastName: str(u.surname),
    email: str(u.emailaddress),
    phone: str(u.phonenumber) ?? str(u.mobilenumber),
    companySourceId: idStr(u.client_id),
  };
}

const KNOWN_AGREEMENT_STATUSES = ['active', 'inactive', 'expired', 'cancelled'];

function agreementStatus(c: HaloRecord): string {
  const named = typeof c.contract_status === 'string' ? c.contract_status.toLowerCase() : '';
  if (KNOWN_AGREEMENT_STATUSES.includes(named)) return named;
  if (c.active === true) return 'active';
  if (c.expired === true) return 'expired';
  if (c.active === false) return 'inactive';
  return 'unknown';
}

/** Halo's billing period names -> our cycle, with its length in months (for MRR). */
const BILLING_CYCLES: Record<string, { cycle: string; months: number }> = {
  weekly: { cycle: 'weekly', months: 12 / 52 },
  monthly: { cycle: 'monthly', months: 1 },
  quarterly: { cycle: 'quarterly', months: 3 },
  'six monthly': { cycle: 'semiannual', months: 6 },
  'bi-annually': { cycle: 'semiannual', months: 6 },
  annually: { cycle: 'annual', months: 12 },
  yearly: { cycle: 'annual', months: 12 },
  annual: { cycle: 'annual', months: 12 },
};

export function agreementFields(c: HaloRecord): RecordFieldsByResource['agreements'] {
  const period = typeof c.billing_period_string === 'string' ? BILLING_CYCLES[c.billing_period_string.toLowerCase()] : undefined;
  const charge = num(c.periodchargeamount);
  return {
    name: str(c.ref) ?? str(c.contracttype_name) ?? `Contract ${c.id}`,
    status: agreementStatus(c),
    billingCycle: period?.cycle ?? 'unknown',
    companyName: str(c.client_name),
    companySourceId: idStr(c.client_id),
    startDate: dateOnly(c.start_date),
    endDate: dateOnly(c.end_date),
    monthlyRecurringRevenue: period && charge != null ? Math.round((charge / period.months) * 100) / 100 : null,
  };
}

/** A line of a recurring invoice that bills a contract: one line of that contract (agreement). */
/**
 * A recurring-invoice line. It names its item by `item_code`; `itemIds` (item code -> item id, from
 * /api/Item) turns that into the item's id, the source id of the product record, so a line's
 * `product_source_id` points into `products` as on the other PSAs. A code no item carries stays as is.
 */
export function agreementLineFields(
  line: HaloRecord, agreementSourceId: string, itemIds: ReadonlyMap<string, string> = new Map(),
): RecordFieldsByResource['agreement_lines'] {
  const code = str(line.item_code);
  return {
    agreementSourceId,
    productName: str(line.item_shortdescription) ?? code,
    productSourceId: (code && itemIds.get(code)) ?? code,
    quantity: num(line.qty_order),
    unitCost: num(line.unit_cost),
    unitPrice: num(line.unit_price),
    effectiveStart: dateOnly(line.startdate),
    effectiveEnd: dateOnly(line.enddate),
  };
}

/**
 * An Item (/api/Item): name, the recurring price and cost when the item is a recurring one (else the
 * base price and cost), and `internalreference` as its code, which is what recurring-invoice lines
 * carry as `item_code` (Halo swagger Item; the code field is our reading, unconfirmed).
 */
export function productFields(i: HaloRecord): RecordFieldsByResource['products'] {
  const recurring = i.isrecurringitem === true;
  return {
    name: str(i.name) ?? '',
    sku: str(i.internalreference),
    unitPrice: (recurring ? num(i.recurringprice) : null) ?? num(i.baseprice),
    unitCost: (recurring ? num(i.recurringcost) : null) ?? num(i.costprice),
    active: typeof i.inactive === 'boolean' ? !i.inactive : null,
  };
}
