/**
 * The writes the Kaseya BMS connector makes, registered once (docs/architecture.md, Writes). Of the agreement
 * line verbs BMS API 2.0 documents only `add` (adding recurring services to a contract) and nothing that
 * changes, ends or reads them: `agreement.write` registers its three verbs as every connector that declares it
 * does, and agreement-writer.ts refuses a rewrite or an end before any call (no BMS line is ever synced to
 * name, either). The add has no reconcile: no lookup by marker is possible. No project write: BMS documents
 * none (capabilities.ts `unsupported` says so in the 501).
 */
import { agreementLineWrites, ticketWrites, type ConnectorWrites } from '../vendor-writes';
import { kaseyaBmsAgreementWriter } from './agreement-writer';
import { kaseyaBmsWriter } from './writer';

const lines = agreementLineWrites(kaseyaBmsAgreementWriter);

export const kaseyaBmsWrites: ConnectorWrites = {
  ...ticketWrites(kaseyaBmsWriter),
  ...lines,
  'agreement.line.add': { ...lines['agreement.line.add'], find: null },
};
