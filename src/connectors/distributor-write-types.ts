/**
 * The contract between the distributor write (company create at the distributor, docs/architecture.md, Distributor) and a
 * distributor connector (Pax8). Like the PSA write side (./write-types.ts): the connector checks the
 * vendor's own rules before anything leaves, shows the exact request(s) a commit sends, sends them,
 * and can find a company it may already have created (reconcile before any retry of a create).
 *
 * Field problems name the fields of OUR request (snake_case: `bill_on_behalf_of_enabled`,
 * `address.postal_code`, `contacts[0].email`), not the vendor's.
 */
import type { FieldProblem, VendorRequestPreview, WriteContext } from './write-types';

export interface DistributorAddressDraft {
  street: string;
  street2?: string | null;
  city: string;
  stateOrProvince: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2, two capital letters. */
  country: string;
}

export interface DistributorContactDraft {
  firstName: string;
  lastName: string;
  email: string;
  phone: string | null;
}

export interface DistributorCompanyDraft {
  name: string;
  address: DistributorAddressDraft | null;
  phone: string | null;
  website: string | null;
  externalId: string | null;
  billOnBehalfOfEnabled: boolean | null;
  selfServiceAllowed: boolean | null;
  orderApprovalRequired: boolean | null;
  contacts: DistributorContactDraft[];
}

export interface DistributorCompany {
  /** The distributor's company id. */
  companyRef: string;
  /** The company exactly as the distributor answered it. */
  native: Record<string, unknown>;
}

export interface DistributorCompanyWriter {
  /** Every vendor rule, checked locally. Empty when the draft may be sent. */
  checkCompany(d: DistributorCompanyDraft): FieldProblem[];
  /** The exact request(s) createCompany sends, in order (no credentials; paths relative to the base URL). */
  previewCreateCompany(d: DistributorCompanyDraft): VendorRequestPreview[];
  /**
   * Sends the create. A vendor refusal of the content is a VendorValidationError (`problems`);
   * throttling and outages stay VendorHttpError.
   */
  createCompany(ctx: WriteContext, d: DistributorCompanyDraft): Promise<DistributorCompany>;
  /** The live company this draft would have created (reconcile), or null. */
  findCompany(ctx: WriteContext, d: DistributorCompanyDraft): Promise<DistributorCompany | null>;
}
