/** The write Pax8 makes, registered once (docs/architecture.md, Writes): company create at the distributor. */
import { companyWrites, type ConnectorWrites } from '../vendor-writes';
import { pax8CompanyWriter } from './company-writer';

export const pax8Writes: ConnectorWrites = companyWrites(pax8CompanyWriter);
