/**
 * The writes the limited PSA connector makes, registered once (docs/architecture.md, Writes); capabilities.ts
 * declares them, and that they commit on its fixture host only (rule 14).
 */
import { agreementLineWrites, projectWrites, ticketWrites, type ConnectorWrites } from '../vendor-writes';
import { haloPsaAgreementWriter } from './agreement-writer';
import { haloPsaProjectWriter } from './project-writer';
import { haloPsaWriter } from './writer';

export const haloPsaWrites: ConnectorWrites = {
  ...ticketWrites(haloPsaWriter),
  ...projectWrites(haloPsaProjectWriter),
  ...agreementLineWrites(haloPsaAgreementWriter),
};
