/**
 * Synthetic Pax8 records for `grow` (benchmarks): plain, valid native records made in bulk. One
 * timestamp is shared by a batch so growing by 50,000 does not push the vendor clock into the future.
 */
import { randomUUID } from 'node:crypto';
import type { Pax8Dataset, Pax8Resource } from './dataset';

const CITIES = [
  ['Denver', 'CO', '80202'], ['Austin', 'TX', '78701'], ['Seattle', 'WA', '98101'], ['Atlanta', 'GA', '30303'],
  ['Columbus', 'OH', '43215'], ['Phoenix', 'AZ', '85004'], ['Raleigh', 'NC', '27601'], ['Boise', 'ID', '83702'],
] as const;

export function growDataset(ds: Pax8Dataset, resource: Pax8Resource, count: number, now: Date): void {
  const stamp = now.toISOString();
  const day = stamp.slice(0, 10);
  const base = ds.count(resource);
  switch (resource) {
    case 'companies':
      for (let i = 0; i < count; i++) {
        const n = base + i + 1;
        const [city, state, zip] = CITIES[n % CITIES.length];
        ds.putCompany({
          id: randomUUID(),
          name: `Synthetic Customer ${String(n).padStart(6, '0')}`,
          address: { street: `${100 + (n % 9000)} Main St`, city, stateOrProvince: state, postalCode: zip, country: 'US' },
          phone: `555-${String(n % 1000).padStart(3, '0')}-${String(n % 10000).padStart(4, '0')}`,
          website: `https://customer${n}.example.com`,
          externalId: `SYN${n}`,
          billOnBehalfOfEnabled: n % 3 === 0,
          selfServiceAllowed: n % 2 === 0,
          orderApprovalRequired: n % 5 === 0,
          status: 'Active',
          updatedDate: stamp,
        });
      }
      return;
    case 'contacts': {
      if (ds.companies.length === 0) growDataset(ds, 'companies', 1, now);
      const companies = ds.companies;
      for (let i = 0; i < count; i++) {
        const n = base + i + 1;
        const company = companies[i % companies.length];
        ds.putContact(company.id, {
          id: randomUUID(),
          firstName: `Contact${n}`,
          lastName: 'Synthetic',
          email: `contact${n}@example.com`,
          phone: `555-010-${String(n % 10000).padStart(4, '0')}`,
          createdDate: day,
          types: [{ type: 'Technical', primary: false }],
        });
      }
      return;
    }
    case 'products':
      for (let i = 0; i < count; i++) {
        const n = base + i + 1;
        ds.putProduct({
          id: randomUUID(),
          name: `Synthetic Product ${n}`,
          vendorName: 'Synthetic Vendor',
          shortDescription: 'Generated for load tests.',
          sku: `SYN-PRD-${n}`,
          requiresCommitment: false,
        });
      }
      return;
    case 'subscriptions': {
      if (ds.companies.length === 0) growDataset(ds, 'companies', 1, now);
      if (ds.products.length === 0) growDataset(ds, 'products', 1, now);
      for (let i = 0; i < count; i++) {
        const company = ds.companies[i % ds.companies.length];
        const product = ds.products[i % ds.products.length];
        ds.putSubscription({
          id: randomUUID(),
          companyId: company.id,
          productId: product.id,
          quantity: 1 + (i % 50),
          startDate: stamp,
          createdDate: stamp,
          updatedDate: stamp,
          billingStart: day,
          status: 'Active',
          price: 10,
          currencyCode: 'USD',
          partnerCost: 8,
          productName: product.name,
          billingTerm: 'Monthly',
        });
      }
      return;
    }
  }
}
