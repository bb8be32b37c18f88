/**
 * One Pax8 partner account's data (one simulator instance): companies, their contacts, the product
 * catalogue and subscriptions, kept in insertion order (Pax8's list order when unsorted) with id
 * indexes so lookups stay O(1) at benchmark sizes.
 */
import { randomUUID } from 'node:crypto';
import type { VendorClock } from '../kit';
import type { Pax8Company, Pax8Contact, Pax8Product, Pax8Subscription } from './native';
import type { CompanyInput, ContactInput } from './validation';

export const PAX8_RESOURCES = ['companies', 'contacts', 'products', 'subscriptions'] as const;
export type Pax8Resource = (typeof PAX8_RESOURCES)[number];

export function isPax8Resource(name: string): name is Pax8Resource {
  return (PAX8_RESOURCES as readonly string[]).includes(name);
}

export class Pax8Dataset {
  readonly companies: Pax8Company[] = [];
  readonly products: Pax8Product[] = [];
  readonly subscriptions: Pax8Subscription[] = [];
  private readonly companyById = new Map<string, Pax8Company>();
  private readonly contactsByCompany = new Map<string, Pax8Contact[]>();
  private readonly contactById = new Map<string, { contact: Pax8Contact; companyId: string }>();
  private readonly productById = new Map<string, Pax8Product>();
  private readonly subscriptionById = new Map<string, Pax8Subscription>();

  constructor(private readonly clock: VendorClock) {}

  company(id: string): Pax8Company | undefined {
    return this.companyById.get(id);
  }
  contact(id: string): { contact: Pax8Contact; companyId: string } | undefined {
    return this.contactById.get(id);
  }
  contactsOf(companyId: string): Pax8Contact[] {
    return this.contactsByCompany.get(companyId) ?? [];
  }
  /** Every contact with the company it lives under: the form a seed takes them in. */
  contactsWithCompany(): (Pax8Contact & { companyId: string })[] {
    return [...this.contactsByCompany].flatMap(([companyId, list]) => list.map((c) => ({ ...c, companyId })));
  }
  allContacts(): Pax8Contact[] {
    return [...this.contactsByCompany.values()].flat();
  }
  product(id: string): Pax8Product | undefined {
    return this.productById.get(id);
  }
  subscription(id: string): Pax8Subscription | undefined {
    return this.subscriptionById.get(id);
  }
  count(resource: Pax8Resource): number {
    return resource === 'contacts' ? this.contactById.size : this[resource].length;
  }

  // --- loading native records as they are (seed, grow) ----------------------------------------

  putCompany(company: Pax8Company): void {
    if (this.companyById.has(company.id)) throw new Error(`pax8: duplicate company id ${company.id}`);
    this.companies.push(company);
    this.companyById.set(company.id, company);
  }
  putContact(companyId: string, contact: Pax8Contact): void {
    if (!this.companyById.has(companyId)) throw new Error(`pax8: contact ${contact.id} names unknown company ${companyId}`);
    if (this.contactById.has(contact.id)) throw new Error(`pax8: duplicate contact id ${contact.id}`);
    const list = this.contactsByCompany.get(companyId);
    if (list) list.push(contact);
    else this.contactsByCompany.set(companyId, [contact]);
    this.contactById.set(contact.id, { contact, companyId });
  }
  putProduct(product: Pax8Product): void {
    if (this.productById.has(product.id)) throw new Error(`pax8: duplicate product id ${product.id}`);
    this.products.push(product);
    this.productById.set(product.id, product);
  }
  putSubscription(sub: Pax8Subscription): void {
    if (this.subscriptionById.has(sub.id)) throw new Error(`pax8: duplicate subscription id ${sub.id}`);
    this.subscriptions.push(sub);
    this.subscriptionById.set(sub.id, sub);
  }

  // --- creation as Pax8 does it (ids and read-only fields assigned here) -----------------------

  /** A new company is Inactive until it has contacts (Pax8's rule); contacts in the body count. */
  createCompany(input: CompanyInput): Pax8Company {
    const company: Pax8Company = {
      id: randomUUID(),
      name: input.name,
      address: { ...input.address },
      phone: input.phone,
      website: input.website,
      ...(input.externalId !== undefined ? { externalId: input.externalId } : {}),
      billOnBehalfOfEnabled: input.billOnBehalfOfEnabled,
      selfServiceAllowed: input.selfServiceAllowed,
      orderApprovalRequired: input.orderApprovalRequired,
      status: input.contacts.length ? 'Active' : 'Inactive',
      updatedDate: this.clock.now().toISOString(),
    };
    this.putCompany(company);
    for (const c of input.contacts) this.putContact(company.id, this.newContact(c));
    return company;
  }

  /** Adding a contact to an Inactive company activates it (a change to the company). */
  createContact(companyId: string, input: ContactInput): Pax8Contact {
    const contact = this.newContact(input);
    this.putContact(companyId, contact);
    const company = this.companyById.get(companyId);
    if (company && company.status === 'Inactive') {
      company.status = 'Active';
      company.updatedDate = this.clock.now().toISOString();
    }
    return contact;
  }

  private newContact(input: ContactInput): Pax8Contact {
    return {
      id: randomUUID(),
      firstName: input.firstName,
      lastName: input.lastName,
      email: input.email,
      phone: input.phone,
      createdDate: this.clock.now().toISOString().slice(0, 10),
      types: input.types.map((t) => ({ ...t })),
    };
  }
}
