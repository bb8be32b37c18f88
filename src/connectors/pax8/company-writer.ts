/**
 * Pax8 write side: company create at the distributor (docs/architecture.md, Distributor).
 *
 * Source: Pax8 Partner Endpoints OpenAPI (devx.pax8.com/openapi/partner-endpoints.json, as kept in
 * github.com/api-evangelist/pax8 `openapi/_original/pax8-partner-endpoints-openapi.json`):
 * - `POST /companies` (operationId createCompany) takes the `Company` schema: required `name,
 *   address, phone, website, billOnBehalfOfEnabled, selfServiceAllowed, orderApprovalRequired`;
 *   optional `externalId` and `contacts` (Contact: required `firstName, lastName, email, phone`,
 *   `email` format email; `types` [{type: Admin|Billing|Technical, primary}]). Contacts go inline in
 *   the same request ("create the company with contacts in a single request"), so one request is
 *   sent, never separate contact posts. `Address.country` has `pattern: ^[A-Z]{2}$`. The Address
 *   schema lists no required parts; we require street, city, stateOrProvince and postalCode as
 *   docs/vendors.md records Pax8 doing (stricter than the schema, never kinder).
 * - 200 answers the created Company (with `id`); 422 "Invalid Company" answers the `Error` envelope
 *   `{type, message, instance, status, details: [{type, message, instance, status}]}`. ErrorDetail has
 *   no field property, so the field is read from the detail's message (see `refusal`). A 400 (bad
 *   JSON types) carries the same envelope and is treated the same way.
 * - "A company must have a primary contact for each contact type" (ContactType) and the documented
 *   create example marks its one contact primary for Admin, Billing and Technical: we do the same for
 *   the first contact of the draft; further contacts are sent without types.
 *
 * Retries: the create is a write, so the shared client does not retry it. A 429 is a refusal before any
 * processing (rate limiting), so it alone is waited out (Retry-After, else the client's backoff) and
 * resent, within the client's own limits (the profile's `resendThrottledWrites`). A 503, a timeout or a dropped
 * connection may follow a create Pax8 did make: those are thrown as they are, and whoever retries
 * must call findCompany first. A 401 gets one new token and one resend (not processed either).
 */
import type {
  DistributorCompany, DistributorCompanyDraft, DistributorCompanyWriter, DistributorContactDraft,
} from '../distributor-write-types';
import { vendorSession } from '../vendor-session';
import { fieldNamedIn, type FieldMap } from '../vendor-errors';
import { writerCall, type VendorDialect } from '../writer-http';
import type { FieldProblem, VendorRequestPreview, WriteContext } from '../write-types';
import { PAX8_PAGE_SIZE, PAX8_PAGING } from './connector';
import { pax8Profile } from './token';

/**
 * Reconcile bound: GET /companies has no name (or externalId) filter, only page, size, sort and
 * city/country/stateOrProvince/postalCode/flag/status filters (OpenAPI `listCompanies`), so
 * findCompany reads the whole list: pages of 200 (Pax8's maximum), at most 50 pages, i.e. 10,000
 * companies. A longer list is not searched partly (a miss there would duplicate the company on a
 * retry): findCompany throws instead.
 */
export const PAX8_RECONCILE_MAX_PAGES = 50;

const COUNTRY = /^[A-Z]{2}$/;
/** The same well-formedness the simulator (and Pax8's `format: email`) asks of a contact email. */
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** ContactType enum (OpenAPI). */
const CONTACT_TYPES = ['Admin', 'Billing', 'Technical'] as const;

/** Pax8 request field (as a message names it) -> our request field. Longest first, so `address.country` wins over `address`. */
const FIELDS: FieldMap = {
  'billonbehalfofenabled': 'bill_on_behalf_of_enabled',
  'orderapprovalrequired': 'order_approval_required',
  'address.stateorprovince': 'address.state_or_province',
  'selfserviceallowed': 'self_service_allowed',
  'address.postalcode': 'address.postal_code',
  'address.country': 'address.country',
  'address.street2': 'address.street2',
  'address.street': 'address.street',
  'address.city': 'address.city',
  'externalid': 'external_id',
  'contacts': 'contacts',
  'address': 'address',
  'website': 'website',
  'phone': 'phone',
  'name': 'name',
};
const CONTACT_FIELDS: Readonly<Record<string, string>> = {
  firstname: 'first_name', lastname: 'last_name', email: 'email', phone: 'phone', types: 'types',
};

// --- checks ------------------------------------------------------------------------------------

const blank = (v: unknown): boolean => typeof v !== 'string' || v.trim() === '';

export function checkPax8Company(d: DistributorCompanyDraft): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const need = (field: string, value: unknown, what: string) => {
    if (blank(value)) problems.push({ field, message: `Pax8 requires ${what}.` });
  };
  need('name', d.name, 'a company name');
  if (!d.address) {
    problems.push({ field: 'address', message: 'Pax8 requires an address (street, city, state or province, postal code, country).' });
  } else {
    const a = d.address;
    need('address.street', a.street, 'a street');
    if (a.street2 != null && typeof a.street2 !== 'string') {
      problems.push({ field: 'address.street2', message: 'The second street line must be text.' });
    }
    need('address.city', a.city, 'a city');
    need('address.state_or_province', a.stateOrProvince, 'a state or province');
    need('address.postal_code', a.postalCode, 'a postal code');
    if (blank(a.country)) {
      problems.push({ field: 'address.country', message: 'Pax8 requires a country (ISO 3166-1 alpha-2 code, e.g. "US").' });
    } else if (!COUNTRY.test(a.country)) {
      problems.push({ field: 'address.country', message: 'The country must be an ISO 3166-1 alpha-2 code of two capital letters (e.g. "US").' });
    }
  }
  need('phone', d.phone, 'a phone number');
  need('website', d.website, 'a website');
  if (d.externalId != null && typeof d.externalId !== 'string') {
    problems.push({ field: 'external_id', message: 'The external id must be text.' });
  }
  const flag = (field: string, value: unknown, what: string) => {
    if (typeof value !== 'boolean') problems.push({ field, message: `Pax8 requires ${what} (true or false).` });
  };
  flag('bill_on_behalf_of_enabled', d.billOnBehalfOfEnabled, 'bill on behalf of enabled');
  flag('self_service_allowed', d.selfServiceAllowed, 'self service allowed');
  flag('order_approval_required', d.orderApprovalRequired, 'order approval required');
  (d.contacts ?? []).forEach((c, i) => {
    const f = (k: string) => `contacts[${i}].${k}`;
    need(f('first_name'), c.firstName, 'a first name for every contact');
    need(f('last_name'), c.lastName, 'a last name for every contact');
    if (blank(c.email)) problems.push({ field: f('email'), message: 'Pax8 requires an email for every contact.' });
    else if (!EMAIL.test(c.email)) problems.push({ field: f('email'), message: 'The email must be a well-formed email address.' });
    need(f('phone'), c.phone, 'a phone number for every contact');
  });
  return problems;
}

// --- the request -------------------------------------------------------------------------------

function contactBody(c: DistributorContactDraft, first: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { firstName: c.firstName, lastName: c.lastName, email: c.email, phone: c.phone };
  if (first) body.types = CONTACT_TYPES.map((type) => ({ type, primary: true }));
  return body;
}

/** The POST /companies body, exactly as sent. Absent optional values are left out; nulls of required ones are sent (Pax8 decides). */
export function pax8CompanyBody(d: DistributorCompanyDraft): Record<string, unknown> {
  const a = d.address;
  const address = a
    ? {
        street: a.street,
        ...(a.street2 != null && a.street2 !== '' ? { street2: a.street2 } : {}),
        city: a.city,
        stateOrProvince: a.stateOrProvince,
        postalCode: a.postalCode,
        country: a.country,
      }
    : null;
  return {
    name: d.name,
    address,
    phone: d.phone,
    website: d.website,
    ...(d.externalId != null ? { externalId: d.externalId } : {}),
    billOnBehalfOfEnabled: d.billOnBehalfOfEnabled,
    selfServiceAllowed: d.selfServiceAllowed,
    orderApprovalRequired: d.orderApprovalRequired,
    ...(d.contacts?.length ? { contacts: d.contacts.map((c, i) => contactBody(c, i === 0)) } : {}),
  };
}

// --- vendor calls ------------------------------------------------------------------------------

/**
 * How this writer calls Pax8 (writer-http.ts): its profile (token.ts: the session's bearer token, one fresh
 * token after a 401, a 429 waited out and resent), and its refusal of a body (422, or 400 for wrong JSON types) as field problems named after our request.
 */
const pax8Dialect: VendorDialect = {
  connector: 'pax8',
  profile: pax8Profile,
  refusedStatuses: [422, 400],
  problems(raw) {
    const body = (raw ?? {}) as { message?: unknown; details?: unknown };
    const details = Array.isArray(body.details) ? (body.details as { message?: unknown }[]) : [];
    const problems: FieldProblem[] = details
      .filter((x) => typeof x?.message === 'string' && x.message !== '')
      .map((x) => ({ field: fieldOfMessage(x.message as string), message: x.message as string }));
    if (!problems.length) {
      const message = typeof body.message === 'string' && body.message ? body.message : 'Pax8 refused the company.';
      problems.push({ field: fieldOfMessage(message), message });
    }
    return problems;
  },
};
const call = writerCall(pax8Dialect);

/** The request field a Pax8 message names: a contact's field by index first, then the longest company field. */
function fieldOfMessage(message: string): string {
  const contact = /\bcontacts\[(\d+)\]\.(\w+)/i.exec(message);
  if (contact) {
    const field = CONTACT_FIELDS[contact[2].toLowerCase()];
    return field ? `contacts[${contact[1]}].${field}` : `contacts[${contact[1]}]`;
  }
  // fieldNamedIn takes the earliest hit, and the first entry of FIELDS on a tie (longest names first).
  return fieldNamedIn(message, FIELDS, 'body');
}

/** POST /companies once; a 429 (refused before processing) waited out and resent, a 401 renewed (the profile). */
async function postCompany(ctx: WriteContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const created = await call<Record<string, unknown> | null>(ctx, { method: 'POST', path: '/companies', body }, FIELDS, 'body');
  if (!created || typeof created !== 'object' || typeof created.id !== 'string' || !created.id) {
    throw new Error('pax8 POST /companies: the answer has no company id');
  }
  return created;
}

/** Same company: exact name, and the externalId when the draft has one, else phone and website. Deleted companies never match. */
function matches(native: Record<string, unknown>, d: DistributorCompanyDraft): boolean {
  if (native.status === 'Deleted' || native.name !== d.name) return false;
  if (d.externalId != null && d.externalId !== '') return native.externalId === d.externalId;
  return native.phone === d.phone && native.website === d.website;
}

async function findCompany(ctx: WriteContext, d: DistributorCompanyDraft): Promise<DistributorCompany | null> {
  const pages = vendorSession(pax8Profile, ctx).pages<Record<string, unknown>>({ path: '/companies' }, {
    ...PAX8_PAGING,
    maxPages: PAX8_RECONCILE_MAX_PAGES,
    limitError: () => new Error(`pax8 reconcile: more than ${PAX8_RECONCILE_MAX_PAGES * PAX8_PAGE_SIZE} companies to search; not concluding the company is absent.`),
  });
  for await (const companies of pages) {
    const hit = companies.find((c) => matches(c, d));
    if (hit) return { companyRef: String(hit.id), native: hit };
  }
  return null;
}

export const pax8CompanyWriter: DistributorCompanyWriter = {
  checkCompany: checkPax8Company,

  previewCreateCompany(d): VendorRequestPreview[] {
    return [{ method: 'POST', path: '/companies', body: pax8CompanyBody(d) }];
  },

  async createCompany(ctx, d) {
    const native = await postCompany(ctx, pax8CompanyBody(d));
    return { companyRef: String(native.id), native };
  },

  findCompany,
};
