/** The write NinjaOne makes, registered once (docs/architecture.md, Writes): device deploy (./writer.ts). */
import { deviceWrites, type ConnectorWrites } from '../vendor-writes';
import { ninjaOneWriter } from './writer';

export const ninjaOneWrites: ConnectorWrites = deviceWrites(ninjaOneWriter);
