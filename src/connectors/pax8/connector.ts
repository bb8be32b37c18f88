/**
 * Pax8 (distributor) read connector: companies and their contacts, products and subscriptions from
 * the Partner API v1 (`/products`, `/subscriptions`; docs/vendors.md, devx.pax8.com Partner Endpoints).
 *
 * Pages: `page` (0-based) and `size=200` (Pax8's maximum), followed until `page.totalPages`.
 * Incremental: none. Companies carry `updatedDate` (kept as vendorUpdatedAt) but no Pax8 list
 * endpoint filters on it (GET /companies takes only page, size, sort and address/flag/status
 * filters; devx.pax8.com Partner Endpoints OpenAPI), and contacts have no last-updated time at all,
 * so every sync is a full fetch and `ctx.since` is ignored.
 * Contacts live under each company (/companies/{id}/contacts), so they are read company by company.
 */
import { parseVendorTime } from '../canonical';
import type { FetchedRecord, ReadConnector, SyncContext, SyncResource } from '../types';
import { unsupportedResource } from '../read-dispatch';
import { VendorHttpError } from '../vendor-http';
import { vendorSession, type Paging } from '../vendor-session';
import { pax8Profile } from './token';

export const PAX8_PAGE_SIZE = 200;

/** Pax8's lists: `{content, page: {totalPages, number}}`, `page` from 0, `size` up to 200. */
export const PAX8_PAGING: Paging = { style: 'page-number', items: 'content', page: 'page', size: 'size', pageSize: PAX8_PAGE_SIZE, first: 0, totalPages: 'page.totalPages' };

/** Every page of a Pax8 list, in order: `page` (0-based) and `size`, until `page.totalPages` (or an empty page). */
function listPages(ctx: SyncContext, path: string): AsyncGenerator<Record<string, unknown>[]> {
  return vendorSession(pax8Profile, ctx).pages({ path }, PAX8_PAGING);
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function mapCompany(native: Record<string, unknown>): FetchedRecord<'companies'> {
  return {
    sourceId: String(native.id),
    native,
    vendorUpdatedAt: parseVendorTime(native.updatedDate),
    fields: {
      name: typeof native.name === 'string' ? native.name : '',
      // MSPs keep their PSA's company identifier in Pax8's externalId.
      identifier: str(native.externalId),
    },
  };
}

function mapContact(native: Record<string, unknown>, companyId: string): FetchedRecord<'contacts'> {
  return {
    sourceId: String(native.id),
    native,
    // Pax8 contacts only have a createdDate (a date), no last-updated time.
    vendorUpdatedAt: null,
    fields: {
      firstName: str(native.firstName),
      lastName: str(native.lastName),
      email: str(native.email),
      phone: str(native.phone),
      companySourceId: companyId,
    },
  };
}

/** Pages of companies, without repeats should the list shift between page reads. */
async function* fetchCompanies(ctx: SyncContext): AsyncGenerator<FetchedRecord<'companies'>[]> {
  const seen = new Set<string>();
  for await (const page of listPages(ctx, '/companies')) {
    const fresh = page.filter((c) => !seen.has(String(c.id)));
    fresh.forEach((c) => seen.add(String(c.id)));
    if (fresh.length) yield fresh.map(mapCompany);
  }
}

async function* fetchContacts(ctx: SyncContext): AsyncGenerator<FetchedRecord<'contacts'>[]> {
  const seenCompanies = new Set<string>();
  for await (const companies of listPages(ctx, '/companies')) {
    for (const company of companies) {
      const companyId = String(company.id);
      if (seenCompanies.has(companyId)) continue;
      seenCompanies.add(companyId);
      const path = `/companies/${encodeURIComponent(companyId)}/contacts`;
      try {
        for await (const contacts of listPages(ctx, path)) yield contacts.map((c) => mapContact(c, companyId));
      } catch (err) {
        // The company went away between the company page and its contacts: nothing to read.
        if (err instanceof VendorHttpError && err.status === 404) continue;
        throw err;
      }
    }
  }
}

/**
 * Pax8 products (GET /products: id, name, vendorName, sku, vendorSku, requiresCommitment). A product
 * carries no price: Pax8 prices live per product under /products/{id}/pricing, so price and cost are
 * null here and the subscription carries what the partner pays and charges.
 */
function mapProduct(native: Record<string, unknown>): FetchedRecord<'products'> {
  return {
    sourceId: String(native.id),
    native,
    vendorUpdatedAt: null,
    fields: {
      name: typeof native.name === 'string' ? native.name : '',
      sku: str(native.sku),
      unitPrice: null,
      unitCost: null,
      // The product list shows only what can be ordered; it has no inactive marker.
      active: null,
    },
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const dateOnly = (v: unknown): string | null => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : null);

/** Pax8 subscriptions (GET /subscriptions: companyId, productId, quantity, price, partnerCost, billingTerm, status). */
function mapSubscription(native: Record<string, unknown>): FetchedRecord<'subscriptions'> {
  return {
    sourceId: String(native.id),
    native,
    vendorUpdatedAt: parseVendorTime(native.updatedDate),
    fields: {
      companySourceId: str(native.companyId),
      productSourceId: str(native.productId),
      // Not a documented subscription field; the sandbox's records carry it (null elsewhere).
      productName: str(native.productName),
      quantity: num(native.quantity),
      price: num(native.price),
      partnerCost: num(native.partnerCost),
      billingTerm: str(native.billingTerm),
      status: str(native.status),
      startDate: dateOnly(native.startDate),
      endDate: dateOnly(native.endDate),
    },
  };
}

async function* fetchSimple<R extends 'products' | 'subscriptions'>(
  ctx: SyncContext, path: string, map: (n: Record<string, unknown>) => FetchedRecord<R>,
): AsyncGenerator<FetchedRecord<R>[]> {
  const seen = new Set<string>();
  for await (const page of listPages(ctx, path)) {
    const fresh = page.filter((x) => !seen.has(String(x.id)));
    fresh.forEach((x) => seen.add(String(x.id)));
    if (fresh.length) yield fresh.map(map);
  }
}


export const pax8Connector: ReadConnector = {
  name: 'pax8',
  kind: 'distributor',
  resources: ['companies', 'contacts', 'products', 'subscriptions'],
  incremental: [],
  // The client-credentials token, then GET /companies?page=0&size=1 (Partner API v1).
  async probe(ctx: SyncContext): Promise<void> {
    await vendorSession(pax8Profile, ctx).get('/companies', { page: 0, size: 1 });
  },
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    switch (resource) {
      case 'companies':
        return fetchCompanies(ctx) as unknown as AsyncIterable<FetchedRecord<R>[]>;
      case 'contacts':
        return fetchContacts(ctx) as unknown as AsyncIterable<FetchedRecord<R>[]>;
      case 'products':
        return fetchSimple(ctx, '/products', mapProduct) as unknown as AsyncIterable<FetchedRecord<R>[]>;
      case 'subscriptions':
        return fetchSimple(ctx, '/subscriptions', mapSubscription) as unknown as AsyncIterable<FetchedRecord<R>[]>;
      default:
        return unsupportedResource('pax8', resource);
    }
  },
};
