/** The write Datto RMM makes, registered once (docs/architecture.md, Writes): device deploy as a quick job (./writer.ts). */
import { deviceWrites, type ConnectorWrites } from '../vendor-writes';
import { dattoRmmWriter } from './writer';

export const dattoRmmWrites: ConnectorWrites = deviceWrites(dattoRmmWriter);
