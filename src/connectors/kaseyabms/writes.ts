/**
 * The writes the Kaseya BMS connector makes, registered once (docs/architecture.md, Writes). Of the agreement
 * line verbs only `add`: BMS API 2.0 documents adding recurring services to a contract and nothing that
 * changes, ends or reads them (agreement-writer.ts), so a rewrite or end is 501 `not_supported`, and the add
 * has no reconcile (no lookup by marker is possible).
 */
import { agreementLineWrites, ticketWrites, type ConnectorWrites } from '../vendor-writes';
import { kaseyaBmsAgreementWriter } from './agreement-writer';
import { kaseyaBmsWriter } from './writer';

export const kaseyaBmsWrites: ConnectorWrites = {
  ...ticketWrites(kaseyaBmsWriter),
  'agreement.line.add': { ...agreementLineWrites(kaseyaBmsAgreementWriter)['agreement.line.add'], find: null },
};
