/** The writes Autotask makes, registered once (docs/architecture.md, Writes); capabilities.ts declares them. */
import { agreementLineWrites, projectWrites, ticketWrites, type ConnectorWrites } from '../vendor-writes';
import { autotaskAgreementWriter } from './agreement-writer';
import { autotaskProjectWriter } from './project-writer';
import { autotaskWriter } from './writer';

export const autotaskWrites: ConnectorWrites = {
  ...ticketWrites(autotaskWriter),
  ...projectWrites(autotaskProjectWriter),
  ...agreementLineWrites(autotaskAgreementWriter),
};
