/**
 * Request-body checks for company and contact creation, with Pax8's split (devx.pax8.com/docs/errors):
 * a value of the wrong JSON type is bad syntax (400); a well-formed body with missing or invalid
 * values is an invalid entity (422, "Invalid Company"). Every problem names its field.
 */
import { CONTACT_TYPES, type Pax8Address, type Pax8ContactTypeName, type Pax8ErrorDetail } from './native';

export interface CompanyInput {
  name: string;
  address: Pax8Address;
  phone: string;
  website: string;
  externalId?: string;
  billOnBehalfOfEnabled: boolean;
  selfServiceAllowed: boolean;
  orderApprovalRequired: boolean;
  contacts: ContactInput[];
}

export interface ContactInput {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  types: { type: Pax8ContactTypeName; primary: boolean }[];
}

export type Checked<T> =
  | { ok: true; value: T }
  | { ok: false; status: 400 | 422; details: Pax8ErrorDetail[] };

const COUNTRY = /^[A-Z]{2}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collects problems as it reads a body; `syntax` ones make the answer a 400. */
class Problems {
  syntax: Pax8ErrorDetail[] = [];
  invalid: Pax8ErrorDetail[] = [];

  wrongType(field: string, expected: string): void {
    this.syntax.push({ type: 'BAD_REQUEST', status: 400, field, message: `${field}: expected ${expected}` });
  }
  bad(field: string, message: string): void {
    this.invalid.push({ type: 'INVALID_PARAM', status: 422, field, message: `${field}: ${message}` });
  }

  /** A required non-blank string. */
  requiredString(obj: Json, key: string, field: string): string {
    const v = obj[key];
    if (v === undefined || v === null) this.bad(field, 'must not be null');
    else if (typeof v !== 'string') this.wrongType(field, 'a string');
    else if (v.trim() === '') this.bad(field, 'must not be blank');
    else return v;
    return '';
  }
  optionalString(obj: Json, key: string, field: string): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.wrongType(field, 'a string');
    else return v;
    return undefined;
  }
  requiredBoolean(obj: Json, key: string, field: string): boolean {
    const v = obj[key];
    if (v === undefined || v === null) this.bad(field, 'must not be null');
    else if (typeof v !== 'boolean') this.wrongType(field, 'true or false');
    else return v;
    return false;
  }

  result<T>(value: T): Checked<T> {
    if (this.syntax.length) return { ok: false, status: 400, details: this.syntax };
    if (this.invalid.length) return { ok: false, status: 422, details: this.invalid };
    return { ok: true, value };
  }
}

function readAddress(p: Problems, body: Json): Pax8Address {
  const raw = body.address;
  const empty: Pax8Address = { street: '', city: '', stateOrProvince: '', postalCode: '', country: '' };
  if (raw === undefined || raw === null) {
    p.bad('address', 'must not be null');
    return empty;
  }
  if (!isObject(raw)) {
    p.wrongType('address', 'an object');
    return empty;
  }
  const address: Pax8Address = {
    street: p.requiredString(raw, 'street', 'address.street'),
    city: p.requiredString(raw, 'city', 'address.city'),
    stateOrProvince: p.requiredString(raw, 'stateOrProvince', 'address.stateOrProvince'),
    postalCode: p.requiredString(raw, 'postalCode', 'address.postalCode'),
    country: p.requiredString(raw, 'country', 'address.country'),
  };
  const street2 = p.optionalString(raw, 'street2', 'address.street2');
  if (street2 !== undefined) address.street2 = street2;
  if (address.country && !COUNTRY.test(address.country)) {
    p.bad('address.country', 'must be an ISO 3166-1 alpha-2 code of two capital letters (must match "^[A-Z]{2}$")');
  }
  return address;
}

function readContact(p: Problems, raw: unknown, prefix: string): ContactInput {
  const contact: ContactInput = { firstName: '', lastName: '', email: '', phone: '', types: [] };
  if (!isObject(raw)) {
    p.wrongType(prefix || 'body', 'an object');
    return contact;
  }
  const f = (k: string) => (prefix ? `${prefix}.${k}` : k);
  contact.firstName = p.requiredString(raw, 'firstName', f('firstName'));
  contact.lastName = p.requiredString(raw, 'lastName', f('lastName'));
  contact.email = p.requiredString(raw, 'email', f('email'));
  contact.phone = p.requiredString(raw, 'phone', f('phone'));
  if (contact.email && !EMAIL.test(contact.email)) p.bad(f('email'), 'must be a well-formed email address');
  const types = raw.types;
  if (types !== undefined && types !== null) {
    if (!Array.isArray(types)) p.wrongType(f('types'), 'an array');
    else {
      types.forEach((t, i) => {
        const tf = f(`types[${i}]`);
        if (!isObject(t)) return p.wrongType(tf, 'an object');
        const name = p.requiredString(t, 'type', `${tf}.type`);
        const primary = t.primary === undefined || t.primary === null ? false : t.primary;
        if (typeof primary !== 'boolean') p.wrongType(`${tf}.primary`, 'true or false');
        if (name && !(CONTACT_TYPES as readonly string[]).includes(name)) {
          p.bad(`${tf}.type`, `must be one of ${CONTACT_TYPES.join(', ')}`);
        }
        contact.types.push({ type: name as Pax8ContactTypeName, primary: primary === true });
      });
    }
  }
  return contact;
}

/** POST /companies body. */
export function checkCompany(body: unknown): Checked<CompanyInput> {
  const p = new Problems();
  if (!isObject(body)) {
    p.wrongType('body', 'a JSON object');
    return p.result(null as never);
  }
  const company: CompanyInput = {
    name: p.requiredString(body, 'name', 'name'),
    address: readAddress(p, body),
    phone: p.requiredString(body, 'phone', 'phone'),
    website: p.requiredString(body, 'website', 'website'),
    billOnBehalfOfEnabled: p.requiredBoolean(body, 'billOnBehalfOfEnabled', 'billOnBehalfOfEnabled'),
    selfServiceAllowed: p.requiredBoolean(body, 'selfServiceAllowed', 'selfServiceAllowed'),
    orderApprovalRequired: p.requiredBoolean(body, 'orderApprovalRequired', 'orderApprovalRequired'),
    contacts: [],
  };
  const externalId = p.optionalString(body, 'externalId', 'externalId');
  if (externalId !== undefined) company.externalId = externalId;
  const contacts = body.contacts;
  if (contacts !== undefined && contacts !== null) {
    if (!Array.isArray(contacts)) p.wrongType('contacts', 'an array');
    else company.contacts = contacts.map((c, i) => readContact(p, c, `contacts[${i}]`));
  }
  return p.result(company);
}

/** POST /companies/{id}/contacts body. */
export function checkContact(body: unknown): Checked<ContactInput> {
  const p = new Problems();
  const contact = readContact(p, body, '');
  return p.result(contact);
}
