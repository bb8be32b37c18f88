/**
 * The contract between the write pipeline and an RMM connector's write side (device deploy,
 * docs/architecture.md, Device write and ask). The service resolves the device and the catalogue package from the store and
 * checks the OS; the connector shows the exact request (preview), sends it (commit), and, before a
 * retried send, looks for a run an earlier try may already have started (reconcile).
 */
import type { ConnectorName } from '../../entities/tenancy';
import type { VendorRequestPreview, WriteContext } from './write-types';

export interface DeployDraft {
  /** The device's id at the vendor (its source_id). */
  deviceRef: string;
  /** The catalogue item's id at the vendor (the package's source_id). */
  packageRef: string;
  /** The catalogue item's name, as the vendor lists it. */
  packageName: string;
  /**
   * Our write marker (one per idempotency key), for a vendor whose run carries a name of ours where it
   * can be found again (a quick job's name); a connector whose run has none ignores it.
   */
  marker?: string;
}

export interface DeployOutcome {
  /** The device was offline: the vendor accepted the run and starts it when the device checks in. */
  queued: boolean;
  /** What the vendor answered or recorded for the run (an activity), when it says anything. */
  native: Record<string, unknown> | null;
}

export interface DeviceWriter {
  readonly name: ConnectorName;
  previewDeploy(d: DeployDraft): VendorRequestPreview[];
  deploy(ctx: WriteContext, d: DeployDraft): Promise<DeployOutcome>;
  /** A run of this deploy that started at or after `since` (an earlier try of the same commit), or null. */
  findDeploy(ctx: WriteContext, d: DeployDraft, since: Date): Promise<DeployOutcome | null>;
}

/**
 * A deploy whose earlier try may have run, and whose marker look-up could not settle it (more activity
 * since than the look-up reads): it is not sent again (docs/architecture.md, Writes).
 */
export class DeployUnreconciledError extends Error {}
