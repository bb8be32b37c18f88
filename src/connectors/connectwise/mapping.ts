/**
 * ConnectWise native records -> canonical record fields. Pure functions; the native object is only
 * read. ConnectWise leaves empty fields out of its JSON, so every field may be missing.
 */
import { canonicalPriority, canonicalStatus, parseVendorTime } from '../canonical';
import type { RecordFieldsByResource } from '../types';
import type { CwNative } from './client';

/** The project type ConnectWise-using MSPs give a baseline project (see `isBaselineProject`). */
export const BASELINE_PROJECT_TYPE = 'Baseline';

const str = (v: unknown): string | null => (v == null || v === '' ? null : String(v));
const idOf = (ref: unknown): string | null => (ref && typeof ref === 'object' ? str((ref as CwNative).id) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** `2026-01-01T00:00:00Z` -> `2026-01-01` (ConnectWise sends dates as midnight UTC timestamps). */
const dateOnly = (v: unknown): string | null => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : null);

export function vendorUpdatedAt(rec: CwNative): Date | null {
  return parseVendorTime(rec._info?.lastUpdated);
}

export function mapBoard(b: CwNative): RecordFieldsByResource['boards'] {
  return { name: String(b.name ?? ''), active: typeof b.inactiveFlag === 'boolean' ? !b.inactiveFlag : null };
}

export function mapStatus(s: CwNative, boardId: string | null, mapping: Record<string, string>): RecordFieldsByResource['statuses'] {
  const closed = s.closedStatus === true;
  return {
    name: String(s.name ?? ''),
    boardSourceId: idOf(s.board) ?? boardId,
    closed,
    canonical: canonicalStatus(mapping, s.name, closed),
    sortOrder: num(s.sortOrder),
  };
}

export function mapPriority(p: CwNative): RecordFieldsByResource['priorities'] {
  return { name: String(p.name ?? ''), canonical: canonicalPriority(p.name), sortOrder: num(p.sortOrder) };
}

export function mapMember(m: CwNative): RecordFieldsByResource['members'] {
  const name = [m.firstName, m.lastName].filter((x) => typeof x === 'string' && x).join(' ');
  return {
    memberRef: String(m.identifier ?? m.id),
    displayName: name || String(m.identifier ?? m.id),
    active: typeof m.inactiveFlag === 'boolean' ? !m.inactiveFlag : null,
    email: str(m.primaryEmail) ?? str(m.officeEmail),
  };
}

export function mapCompany(c: CwNative): RecordFieldsByResource['companies'] {
  return { name: String(c.name ?? ''), identifier: str(c.identifier) };
}

/** The contact's default item of a communication type (`Email`, `Phone`), else the first one. */
function communication(c: CwNative, type: 'Email' | 'Phone'): string | null {
  const items = Array.isArray(c.communicationItems) ? (c.communicationItems as CwNative[]) : [];
  const ofType = items.filter((i) => i?.communicationType === type);
  return str((ofType.find((i) => i.defaultFlag) ?? ofType[0])?.value);
}

export function mapContact(c: CwNative): RecordFieldsByResource['contacts'] {
  return {
    firstName: str(c.firstName),
    lastName: str(c.lastName),
    email: communication(c, 'Email'),
    phone: communication(c, 'Phone') ?? str(c.defaultPhoneNbr),
    companySourceId: idOf(c.company),
  };
}

/**
 * Service and project tickets. The description is write-only in ConnectWise (it lives in the
 * ticket's first detail-description note), so `description` is null here and filled by the connector
 * from that note; `noteCount` is 0 here and filled by the connector on incremental reads (the list
 * record does not carry it).
 */
export function mapTicket(t: CwNative, mapping: Record<string, string>): RecordFieldsByResource['tickets'] {
  const closed = t.closedFlag === true;
  return {
    summary: String(t.summary ?? ''),
    description: null,
    status: canonicalStatus(mapping, t.status?.name, closed),
    nativeStatus: str(t.status?.name),
    statusSourceId: idOf(t.status),
    priority: canonicalPriority(t.priority?.name),
    nativePriority: str(t.priority?.name),
    prioritySourceId: idOf(t.priority),
    boardSourceId: idOf(t.board),
    boardName: str(t.board?.name),
    companyName: str(t.company?.name),
    companySourceId: idOf(t.company),
    projectSourceId: idOf(t.project),
    recordType: str(t.recordType),
    closed,
    noteCount: 0,
    openedAt: parseVendorTime(t._info?.dateEntered),
    closedAt: parseVendorTime(t.closedDate),
  };
}

/** A baseline project is marked natively by its project type: `type: {name: "Baseline"}`. */
export function isBaselineProject(p: CwNative): boolean {
  return typeof p.type?.name === 'string' && p.type.name.trim().toLowerCase() === BASELINE_PROJECT_TYPE.toLowerCase();
}

export function mapProject(p: CwNative): RecordFieldsByResource['projects'] {
  return {
    name: String(p.name ?? ''),
    status: str(p.status?.name),
    companyName: str(p.company?.name),
    companySourceId: idOf(p.company),
    baseline: isBaselineProject(p),
  };
}

const AGREEMENT_STATUSES = ['active', 'cancelled', 'expired', 'inactive'];

export function mapAgreement(a: CwNative): RecordFieldsByResource['agreements'] {
  const status = typeof a.agreementStatus === 'string' ? a.agreementStatus.toLowerCase() : '';
  const cycle = typeof a.billingCycle?.name === 'string' ? a.billingCycle.name.toLowerCase() : '';
  return {
    name: String(a.name ?? ''),
    status: AGREEMENT_STATUSES.includes(status) ? status : 'unknown',
    billingCycle: cycle || 'unknown',
    companyName: str(a.company?.name),
    companySourceId: idOf(a.company),
    startDate: dateOnly(a.startDate),
    endDate: dateOnly(a.endDate),
    // billAmount is per billing cycle; only a monthly cycle gives monthly revenue without guessing.
    monthlyRecurringRevenue: cycle === 'monthly' ? num(a.billAmount) : null,
  };
}

export function mapAddition(x: CwNative, agreementId: string): RecordFieldsByResource['agreement_lines'] {
  return {
    agreementSourceId: idOf({ id: x.agreementId }) ?? agreementId,
    productName: str(x.product?.description) ?? str(x.description) ?? str(x.product?.identifier),
    productSourceId: idOf(x.product),
    quantity: num(x.quantity),
    unitCost: num(x.unitCost),
    unitPrice: num(x.unitPrice),
    effectiveStart: dateOnly(x.effectiveDate),
    effectiveEnd: dateOnly(x.cancelledDate),
  };
}

/** A /procurement/catalog item (CatalogItem: identifier, description, inactiveFlag, price, cost; pyconnectwise models/manage CatalogItem). */
export function mapCatalogItem(c: CwNative): RecordFieldsByResource['products'] {
  return {
    name: String(c.description ?? c.identifier ?? ''),
    sku: str(c.identifier),
    unitPrice: num(c.price),
    unitCost: num(c.cost),
    active: typeof c.inactiveFlag === 'boolean' ? !c.inactiveFlag : null,
  };
}
