/** The writes ConnectWise makes, registered once (docs/architecture.md, Writes); capabilities.ts declares them. */
import { agreementLineWrites, projectWrites, ticketWrites, type ConnectorWrites } from '../vendor-writes';
import { connectwiseAgreementWriter } from './agreement-writer';
import { connectwiseProjectWriter } from './project-writer';
import { connectwiseWriter } from './writer';

export const connectwiseWrites: ConnectorWrites = {
  ...ticketWrites(connectwiseWriter),
  ...projectWrites(connectwiseProjectWriter),
  ...agreementLineWrites(connectwiseAgreementWriter),
};
