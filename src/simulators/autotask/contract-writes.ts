/**
 * Autotask's recurring-service contract writes: ContractServices (create; update of adjustedPrice and
 * invoiceDescription only) and ContractServiceAdjustments (create only), with what they do to the
 * ContractServiceUnits of each billing period. Refusals are HTTP 500 `{errors: [...]}` as for the other
 * Autotask writes (see writes.ts). Sources, Autotask REST API entity pages:
 * - ContractServices: "On Create(), contractID must reference a Recurring Service type Contract
 *   (Contract.ContractType = 7)"; "On Update(), all fields are Read-Only except for adjustedPrice and
 *   invoiceDescription"; it "does not specify the number of units ... To add Contract Service units to
 *   the contract, or remove units, use the ContractServiceAdjustment entity".
 * - ContractServiceAdjustments: "It can only be created; it CANNOT be queried or updated"; created
 *   without the contract service in place, it creates it.
 * Our readings where Autotask publishes nothing (so the simulator is strict): an inactive (status 0) or
 * ended contract takes no service or adjustment; an adjustment's effectiveDate lies within the
 * contract's dates; units never go below zero; a service already on the contract is refused unless
 * `allowRepeatService`; an adjustment applies to the billing period containing its effectiveDate and
 * every later one (Autotask prorates the first period; the simulator does not).
 */
import { AutotaskError, type InstanceState, type Row } from './store';
import { readFields, refuse, toIsoTime, type WriteContext } from './writes';

const RECURRING_SERVICE = 7;
/** Fields of ContractServices an update may change. */
const UPDATABLE = ['adjustedPrice', 'invoiceDescription'];
/** Names a client might use to set units directly; ContractServices has no such field. */
const UNIT_NAMES = ['units', 'unitchange', 'quantity', 'unitcount'];
/** Months per billing period, by Contracts.contractPeriodType (sandbox picklist values). */
const PERIOD_MONTHS: Record<number, number> = { 1: 1, 2: 3, 3: 6, 4: 12 };
const DAY = 86_400_000;

const round2 = (n: number) => Math.round(n * 100) / 100;
const dayOf = (iso: string) => Date.parse(`${iso.slice(0, 10)}T00:00:00Z`);

/** The contract, checked to be an open recurring service contract on `at` (ms), or the refusal collected. */
function openContract(state: InstanceState, contractId: unknown, errors: string[], at: number | null): Row | undefined {
  const contract = state.table('Contracts').get(Number(contractId));
  if (!contract) {
    errors.push(`contractID ${String(contractId)} does not reference an existing contract.`);
    return undefined;
  }
  if (contract.contractType !== RECURRING_SERVICE) {
    errors.push(`Contract ${contract.id} is not a Recurring Service contract; services can only be added to Recurring Service contracts.`);
  }
  if (contract.status !== 1) errors.push(`Contract ${contract.id} is inactive; its services cannot be changed.`);
  else if (at != null && contract.endDate && at > dayOf(String(contract.endDate))) {
    errors.push(`Contract ${contract.id} ended on ${String(contract.endDate).slice(0, 10)}; its services cannot be changed.`);
  }
  return contract;
}

function activeService(state: InstanceState, serviceId: unknown, errors: string[]): Row | undefined {
  const service = state.table('Services').get(Number(serviceId));
  if (!service) errors.push(`serviceID ${String(serviceId)} does not reference an existing service.`);
  else if (service.isActive === false) errors.push(`Service ${service.id} is inactive.`);
  return service;
}

function serviceOnContract(state: InstanceState, contractId: number, serviceId: number): Row | undefined {
  return state.table('ContractServices').all().find((r) => r.contractID === contractId && r.serviceID === serviceId);
}

function insertContractService(state: InstanceState, contract: Row, service: Row, values: Record<string, unknown>): Row {
  const unitPrice = (values.unitPrice as number | undefined) ?? (service.unitPrice as number | null) ?? 0;
  const adjustedPrice = (values.adjustedPrice as number | undefined) ?? unitPrice;
  const row = state.normalize('ContractServices', {
    ...values,
    id: state.table('ContractServices').nextId(),
    contractID: contract.id,
    serviceID: service.id,
    unitPrice,
    unitCost: service.unitCost ?? null,
    adjustedPrice,
    internalCurrencyAdjustedPrice: adjustedPrice,
    internalCurrencyUnitPrice: unitPrice,
    invoiceDescription: values.invoiceDescription ?? service.invoiceDescription ?? service.name ?? null,
  });
  state.table('ContractServices').insert(row);
  return row;
}

/** POST ContractServices. */
export function createContractService(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const values = readFields(state, 'ContractServices', body, 'create', errors);
  refuse(errors);
  const contract = openContract(state, values.contractID, errors, ctx.now().getTime());
  const service = activeService(state, values.serviceID, errors);
  if (contract && service && serviceOnContract(state, contract.id, service.id)) {
    errors.push(`Service ${service.id} is already on contract ${contract.id}.`);
  }
  refuse(errors);
  return insertContractService(state, contract!, service!, values);
}

/** PATCH ContractServices: adjustedPrice and invoiceDescription only; units only through adjustments. */
export function updateContractService(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const id = Number(body.id ?? body.Id ?? body.ID);
  if (!Number.isInteger(id)) throw new AutotaskError(500, ['id is required to update a ContractServices entity.']);
  const row = state.table('ContractServices').get(id);
  if (!row) throw new AutotaskError(500, [`ContractServices with id ${id} was not found.`]);
  const errors: string[] = [];
  for (const key of Object.keys(body)) {
    const lower = key.toLowerCase();
    if (lower === 'id' || UPDATABLE.some((f) => f.toLowerCase() === lower) || lower === 'userdefinedfields') continue;
    if (UNIT_NAMES.includes(lower)) {
      errors.push(`The units of a contract service cannot be updated; add or remove units with a ContractServiceAdjustments entity.`);
    } else if (state.field('ContractServices', key)) {
      errors.push(`${state.field('ContractServices', key)!.name} is read-only on update; only adjustedPrice and invoiceDescription can be changed.`);
    }
  }
  refuse(errors);
  openContract(state, row.contractID, errors, ctx.now().getTime());
  const changed = readFields(state, 'ContractServices', body, 'update', errors);
  refuse(errors);
  Object.assign(row, changed);
  if ('adjustedPrice' in changed) {
    row.internalCurrencyAdjustedPrice = changed.adjustedPrice;
    repriceFrom(state, row, ctx.now().getTime());
  }
  return row;
}

/** Unit rows of a contract service, in period order. */
function unitRows(state: InstanceState, contractServiceId: number): Row[] {
  return state.table('ContractServiceUnits').all().filter((u) => u.contractServiceID === contractServiceId)
    .slice().sort((a, b) => Date.parse(String(a.startDate)) - Date.parse(String(b.startDate)));
}

/** The price and cost of a period's units from the contract service's current price and cost. */
function price(row: Row, cs: Row): void {
  const units = Number(row.units ?? 0);
  row.price = round2(units * Number(cs.adjustedPrice ?? cs.unitPrice ?? 0));
  row.cost = round2(units * Number(cs.unitCost ?? 0));
}

/** Periods not yet approved and posted that end on or after `from` take the new price. */
function repriceFrom(state: InstanceState, cs: Row, from: number): void {
  for (const u of unitRows(state, cs.id)) if (!u.approveAndPostDate && dayOf(String(u.endDate)) >= dayOf(new Date(from).toISOString())) price(u, cs);
}

/** Billing periods of the contract from the one containing `from` to the contract's end. */
function periodsFrom(contract: Row, from: number): { start: number; end: number }[] {
  const months = PERIOD_MONTHS[Number(contract.contractPeriodType)] ?? 1;
  const start = new Date(dayOf(String(contract.startDate)));
  const end = dayOf(String(contract.endDate));
  const out: { start: number; end: number }[] = [];
  for (let i = 0; i < 1200; i++) {
    const s = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i * months, start.getUTCDate());
    if (s > end) break;
    const e = Math.min(end, Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + (i + 1) * months, start.getUTCDate()) - DAY);
    if (e >= dayOf(new Date(from).toISOString())) out.push({ start: s, end: e });
  }
  return out;
}

const atDay = (ms: number) => `${new Date(ms).toISOString().slice(0, 10)}T00:00:00Z`;

/** POST ContractServiceAdjustments. */
export function createContractServiceAdjustment(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const values = readFields(state, 'ContractServiceAdjustments', body, 'create', errors);
  refuse(errors);
  const effective = dayOf(toIsoTime(values.effectiveDate)!);
  let cs: Row | undefined;
  let contract: Row | undefined;
  let service: Row | undefined;
  if (values.contractServiceID != null) {
    cs = state.table('ContractServices').get(Number(values.contractServiceID));
    if (!cs) errors.push(`contractServiceID ${String(values.contractServiceID)} does not reference an existing contract service.`);
    else {
      if (values.contractID != null && Number(values.contractID) !== cs.contractID) errors.push('contractID does not match the contract of contractServiceID.');
      if (values.serviceID != null && Number(values.serviceID) !== cs.serviceID) errors.push('serviceID does not match the service of contractServiceID.');
      contract = openContract(state, cs.contractID, errors, null);
    }
  } else if (values.contractID == null || values.serviceID == null) {
    errors.push('contractServiceID, or contractID and serviceID, are required.');
  } else {
    contract = openContract(state, values.contractID, errors, null);
    service = activeService(state, values.serviceID, errors);
    if (contract && service) {
      cs = serviceOnContract(state, contract.id, service.id);
      if (cs && values.allowRepeatService === true) cs = undefined;
    }
  }
  if (contract && (effective < dayOf(String(contract.startDate)) || effective > dayOf(String(contract.endDate)))) {
    errors.push(`effectiveDate must be within the contract's dates (${String(contract.startDate).slice(0, 10)} to ${String(contract.endDate).slice(0, 10)}).`);
  }
  const change = Number(values.unitChange);
  const existing = cs ? unitRows(state, cs.id).filter((u) => dayOf(String(u.endDate)) >= effective) : [];
  if (cs && existing.some((u) => Number(u.units ?? 0) + change < 0)) {
    errors.push(`unitChange ${change} would leave the contract service with fewer than zero units.`);
  } else if (!cs && change < 0) {
    errors.push(`unitChange ${change} would leave the contract service with fewer than zero units.`);
  }
  refuse(errors);

  // Created without the contract service in place: Autotask creates it.
  if (!cs) cs = insertContractService(state, contract!, service!, {});
  if (values.adjustedUnitPrice != null) {
    cs.adjustedPrice = values.adjustedUnitPrice;
    cs.internalCurrencyAdjustedPrice = values.adjustedUnitPrice;
  }
  if (values.adjustedUnitCost != null) cs.unitCost = values.adjustedUnitCost;

  const rows = unitRows(state, cs.id);
  const byStart = new Map(rows.map((u) => [dayOf(String(u.startDate)), u]));
  for (const p of periodsFrom(contract!, effective)) {
    let u = byStart.get(p.start);
    if (!u) {
      u = state.normalize('ContractServiceUnits', {
        id: state.table('ContractServiceUnits').nextId(), contractID: cs.contractID, contractServiceID: cs.id, serviceID: cs.serviceID,
        startDate: atDay(p.start), endDate: atDay(p.end), units: 0, price: 0, cost: 0, approveAndPostDate: null,
      });
      state.table('ContractServiceUnits').insert(u);
    }
    u.units = Number(u.units ?? 0) + change;
    price(u, cs);
  }
  const adjustment = state.normalize('ContractServiceAdjustments', {
    ...values,
    id: state.table('ContractServiceAdjustments').nextId(),
    contractID: cs.contractID,
    serviceID: cs.serviceID,
    contractServiceID: cs.id,
  });
  state.table('ContractServiceAdjustments').insert(adjustment);
  return adjustment;
}
