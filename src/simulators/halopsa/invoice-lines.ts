/**
 * Recurring-invoice lines (a Halo contract's agreement lines) written through
 * `POST /api/RecurringInvoice/Lines`, which takes an array of InvoiceDetail (Halo swagger, as kept in
 * covenanttechnologysolutions/halopsa-rest generator/spec/swagger.json). As with Halo's other writes, an
 * element without `id` creates a line on the recurring invoice `ihid`, one with `id` updates that line.
 * InvoiceDetail fields used: ihid, contract_id, _itemid, item_code, item_shortdescription, qty_order,
 * unit_price, unit_cost, net_amount, startdate, enddate, comment_1.
 *
 * Refusals are Halo's 400 with a message (404 for an unknown invoice or line), the whole batch refused
 * before anything changes. Rules (our reading; Halo documents none): the invoice exists and its contract
 * is active and not expired; a new line names an existing, active item (`_itemid`, else `item_code`);
 * quantities and prices are finite numbers, quantities not negative; dates are dates, and a line's end is
 * not before its start.
 */
import { badRequest, notFound } from './errors';
import { clone, haloTime, parseHaloTime, type HaloInstance, type HaloRecord } from './store';

const round2 = (n: number) => Math.round(n * 100) / 100;

function findLine(inst: HaloInstance, id: number): { invoice: HaloRecord; line: HaloRecord } | undefined {
  for (const invoice of inst.table('recurring_invoices').rows) {
    const line = (Array.isArray(invoice.lines) ? (invoice.lines as HaloRecord[]) : []).find((l) => l.id === id);
    if (line) return { invoice, line };
  }
  return undefined;
}

function nextLineId(inst: HaloInstance): number {
  let max = 0;
  for (const invoice of inst.table('recurring_invoices').rows) {
    for (const l of Array.isArray(invoice.lines) ? (invoice.lines as HaloRecord[]) : []) if (typeof l.id === 'number' && l.id > max) max = l.id;
  }
  return max + 1;
}

function checkContract(inst: HaloInstance, invoice: HaloRecord): void {
  const contract = invoice.contract_id ? inst.table('contracts').get(invoice.contract_id) : undefined;
  if (!contract) throw badRequest(`Recurring invoice ${invoice.id} is not linked to a contract`);
  if (contract.active === false || contract.expired === true) {
    throw badRequest(`Contract ${contract.ref ?? contract.id} is ${String(contract.contract_status ?? 'inactive').toLowerCase()}; its lines cannot be changed`);
  }
}

function checkNumber(e: HaloRecord, field: string, min: number | null): void {
  const v = e[field];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${field} must be a number`);
  if (min != null && v < min) throw badRequest(`${field} cannot be negative`);
}

/** A Halo date-time (no zone: UTC) at midnight of its day; throws when not a date. */
function haloDay(e: HaloRecord, field: string): string | undefined {
  const v = e[field];
  if (v === undefined || v === null) return undefined;
  const d = parseHaloTime(v);
  if (!d || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) && d.toISOString().slice(0, 10) !== v.slice(0, 10))) {
    throw badRequest(`${field} is not a valid date`);
  }
  return `${d.toISOString().slice(0, 10)}T00:00:00`;
}

function checkSpan(start: unknown, end: unknown): void {
  const s = parseHaloTime(start)?.getTime();
  const e = parseHaloTime(end)?.getTime();
  if (s != null && e != null && e < s) throw badRequest('The end date of a line cannot be before its start date');
}

function itemOf(inst: HaloInstance, e: HaloRecord): HaloRecord {
  const items = inst.table('items').rows;
  const item = e._itemid != null ? inst.table('items').get(Number(e._itemid))
    : typeof e.item_code === 'string' ? items.find((i) => i.internalreference === e.item_code) : undefined;
  if (e._itemid == null && e.item_code == null) throw badRequest('An item is required (_itemid or item_code)');
  if (!item) throw badRequest(`Item ${String(e._itemid ?? e.item_code)} does not exist`);
  if (item.inactive === true) throw badRequest(`Item ${item.name} is inactive`);
  return item;
}

type Plan = () => HaloRecord;

/** Validates one element and returns what writing it does (run only once the whole batch is valid). */
function plan(inst: HaloInstance, e: HaloRecord, at: Date, ids: { next: number }): Plan {
  for (const f of ['qty_order', 'unit_price', 'unit_cost']) checkNumber(e, f, f === 'qty_order' ? 0 : null);
  const start = haloDay(e, 'startdate');
  const end = haloDay(e, 'enddate');
  if (e.id != null && Number(e.id) > 0) {
    const found = findLine(inst, Number(e.id));
    if (!found) throw notFound(`Invoice line ${String(e.id)} not found`);
    checkContract(inst, found.invoice);
    checkSpan(start ?? found.line.startdate, end ?? found.line.enddate);
    return () => {
      const { line, invoice } = found;
      for (const f of ['qty_order', 'unit_price', 'unit_cost', 'comment_1', 'item_shortdescription']) if (e[f] !== undefined) line[f] = e[f];
      if (start) line.startdate = start;
      if (end) line.enddate = end;
      return finish(invoice, line, at);
    };
  }
  if (e.ihid == null) throw badRequest('ihid is required to add a line to a recurring invoice');
  const invoice = inst.table('recurring_invoices').get(Number(e.ihid));
  if (!invoice) throw notFound(`Recurring invoice ${String(e.ihid)} not found`);
  checkContract(inst, invoice);
  if (e.contract_id != null && Number(e.contract_id) !== invoice.contract_id) throw badRequest('contract_id does not match the contract of the recurring invoice');
  const item = itemOf(inst, e);
  const contract = inst.table('contracts').get(invoice.contract_id)!;
  checkSpan(start ?? contract.start_date, end ?? contract.end_date);
  const id = ids.next++;
  return () => {
    const line: HaloRecord = {
      id,
      ihid: invoice.id,
      item_code: item.internalreference,
      item_shortdescription: e.item_shortdescription ?? item.name,
      qty_order: e.qty_order ?? 1,
      unit_price: e.unit_price ?? item.recurringprice ?? item.baseprice ?? 0,
      unit_cost: e.unit_cost ?? item.recurringcost ?? item.costprice ?? 0,
      net_amount: 0,
      contract_id: invoice.contract_id,
      startdate: start ?? contract.start_date,
      enddate: end ?? contract.end_date,
      ...(e.comment_1 != null ? { comment_1: e.comment_1 } : {}),
    };
    if (!Array.isArray(invoice.lines)) invoice.lines = [];
    (invoice.lines as HaloRecord[]).push(line);
    return finish(invoice, line, at);
  };
}

function finish(invoice: HaloRecord, line: HaloRecord, at: Date): HaloRecord {
  line.net_amount = round2(Number(line.qty_order ?? 0) * Number(line.unit_price ?? 0));
  invoice.total = round2((invoice.lines as HaloRecord[]).reduce((s, l) => s + Number(l.net_amount ?? 0), 0));
  invoice.last_modified = haloTime(at);
  return clone(line);
}

/** POST /api/RecurringInvoice/Lines: the written lines, in order (all or nothing). */
export function writeInvoiceLines(inst: HaloInstance, elements: HaloRecord[], at: Date): HaloRecord[] {
  const ids = { next: nextLineId(inst) };
  const plans = elements.map((e) => plan(inst, e, at, ids));
  return plans.map((p) => p());
}
