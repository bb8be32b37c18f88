/**
 * Pax8's native record shapes (Partner API v1, devx.pax8.com OpenAPI "PARTNER ENDPOINTS").
 * Optional fields are left out of a record when Pax8 has no value, as Pax8 does.
 */

export interface Pax8Address {
  street: string;
  street2?: string;
  city: string;
  stateOrProvince: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2 */
  country: string;
}

export type Pax8CompanyStatus = 'Active' | 'Inactive' | 'Deleted';

export interface Pax8Company {
  id: string;
  name: string;
  address: Pax8Address;
  phone: string;
  website: string;
  externalId?: string;
  billOnBehalfOfEnabled: boolean;
  selfServiceAllowed: boolean;
  orderApprovalRequired: boolean;
  /** Inactive until the company has contacts. */
  status: Pax8CompanyStatus;
  updatedDate: string;
}

export const CONTACT_TYPES = ['Admin', 'Billing', 'Technical'] as const;
export type Pax8ContactTypeName = (typeof CONTACT_TYPES)[number];

export interface Pax8Contact {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  /** A date, YYYY-MM-DD. Contacts have no last-updated time in Pax8. */
  createdDate: string;
  types: { type: Pax8ContactTypeName; primary: boolean }[];
}

export interface Pax8Product {
  id: string;
  name: string;
  vendorName: string;
  shortDescription?: string;
  sku: string;
  vendorSku?: string;
  requiresCommitment?: boolean;
}

export interface Pax8Subscription {
  id: string;
  parentSubscriptionId?: string;
  companyId: string;
  productId: string;
  vendorSubscriptionId?: string;
  quantity: number;
  startDate: string;
  endDate?: string;
  createdDate: string;
  updatedDate: string;
  billingStart: string;
  status: string;
  price: number;
  currencyCode: string;
  partnerCost: number;
  productName: string;
  billingTerm: string;
  commitmentTerm?: { id: string; term: string; endDate: string };
}

/** Pax8's error body (devx.pax8.com/docs/errors). */
export interface Pax8ErrorDetail {
  type?: string;
  status?: number;
  message: string;
  instance?: string;
  /** Internal only (validation, Pax8InvalidRecordError): never sent over HTTP, as Pax8's ErrorDetail has no such property. */
  field?: string;
}
export interface Pax8ErrorBody {
  type: string;
  message: string;
  instance: string;
  status: number;
  details: Pax8ErrorDetail[];
}
