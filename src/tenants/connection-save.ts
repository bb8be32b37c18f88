/**
 * The one way a connection is saved, by internal tooling (`create_connection`, `update_connection`) and
 * by the connect page alike: credentials its connector takes, a base URL the outbound guard admits, the
 * vendor side (probe on request, a PSA's statuses and the status mapping), then sealed into the store
 * (admin.service.ts) with its sync scheduled; a change that alters the status mapping re-syncs in full.
 */
import type { Connection } from '../../entities';
import { sandboxVendorOrigin, type AppConfig } from '../config/config';
import type { JobQueue } from '../../jobs/queue/types';
import type { SandboxSimulators } from '../simulators';
import type { SyncJobs } from '../sync/sync-jobs';
import type { WebhooksService } from '../webhooks/webhooks.service';
import type { AdminService } from './admin.service';
import { readConnector } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import {
  checkBaseUrl, checkCredentials, deriveStatusMapping, testConnection, unmappedStatuses, vendorStatuses,
} from './connection-checks';

/** What saving a connection uses of the service graph. */
export interface ConnectionSaveDeps {
  config: Pick<AppConfig, 'webhookAllowLoopback' | 'publicUrl' | 'sandboxVendorBaseUrl'>;
  webhooks: Pick<WebhooksService, 'resolve'>;
  simulators: SandboxSimulators | null;
  admin: AdminService;
  syncJobs: SyncJobs;
  queue: JobQueue;
}

/** The outbound guard's options; the server's own simulators are admitted where it mounts them. */
export const guardOptions = (services: Pick<ConnectionSaveDeps, 'config' | 'webhooks' | 'simulators'>) => ({
  allowLoopback: services.config.webhookAllowLoopback, resolve: services.webhooks.resolve,
  fixturePrefix: services.simulators ? `${sandboxVendorOrigin(services.config)}/sandbox-vendors/` : undefined,
});


export type MappingSource = 'given' | 'derived' | 'kept' | 'none';

export interface VendorSide { mapping: Record<string, string>; source: MappingSource; unmapped: string[] }

/**
 * The vendor side of a save: the probe when asked, then a PSA's statuses (read whenever the connector
 * reads them: they also prove the credentials) and the mapping. `mapping`: given in the request (an
 * empty one asks for a derived one); `current`: the connection's own, kept when none is given.
 */
async function vendorSide(connector: string, baseUrl: string, credentials: Record<string, string>, test: boolean, mapping: Record<string, string> | undefined, current?: Record<string, string>): Promise<VendorSide> {
  if (test) await testConnection(connector, baseUrl, credentials);
  const statuses = await vendorStatuses(connector, baseUrl, credentials);
  const givenOne = mapping && Object.keys(mapping).length ? mapping : undefined;
  const keep = !mapping && current !== undefined;
  if (!statuses) {
    return { mapping: givenOne ?? (keep ? current! : {}), source: givenOne ? 'given' : keep ? 'kept' : 'none', unmapped: [] };
  }
  const effective = givenOne ?? (keep ? current! : deriveStatusMapping(statuses));
  const source: MappingSource = givenOne ? 'given' : keep ? 'kept' : 'derived';
  return { mapping: effective, source, unmapped: unmappedStatuses(statuses, effective) };
}

/** The credentials and base URL as they will be saved (trimmed, checked); refused with 422 `validation`. */
export async function checkedConnectionInput(services: Pick<ConnectionSaveDeps, 'config' | 'webhooks' | 'simulators'>, connector: string, baseUrl: string, credentials: Record<string, string | null | undefined>) {
  return { credentials: checkCredentials(connector, credentials), baseUrl: await checkBaseUrl(baseUrl, guardOptions(services)) };
}

/** A new connection of the tenant, checked at the vendor, sealed, its sync scheduled. */
export async function addConnection(services: ConnectionSaveDeps, input: {
  tenantId: string; kind: Connection['kind']; connector: string; baseUrl: string;
  credentials: Record<string, string | null | undefined>; test: boolean; statusMapping?: Record<string, string>;
}): Promise<{ connection: Connection; side: VendorSide }> {
  const kind = readConnector(input.connector).kind;
  if (kind !== input.kind) throw new ServiceError('validation', `The ${input.connector} connector is a ${kind} connector.`, { details: { field: 'kind' } });
  const { credentials, baseUrl } = await checkedConnectionInput(services, input.connector, input.baseUrl, input.credentials);
  const side = await vendorSide(input.connector, baseUrl, credentials, input.test, input.statusMapping);
  const connection = await services.admin.createConnection({
    tenantId: input.tenantId, kind: input.kind, connector: input.connector, baseUrl, credentials, statusMapping: side.mapping,
  });
  await services.syncJobs.schedule(connection);
  return { connection, side };
}

/** A connection's base URL, credentials (all of them, replaced) or status mapping changed; its data stays. */
export async function changeConnection(services: ConnectionSaveDeps, c: Connection, change: {
  baseUrl?: string; credentials?: Record<string, string | null | undefined>; test: boolean; statusMapping?: Record<string, string>;
}): Promise<{ connection: Connection; side: VendorSide }> {
  const credentials = change.credentials ? checkCredentials(c.connector, change.credentials) : services.admin.credentialsOf(c);
  const baseUrl = change.baseUrl != null ? await checkBaseUrl(change.baseUrl, guardOptions(services)) : c.baseUrl;
  const side = await vendorSide(c.connector, baseUrl, credentials, change.test, change.statusMapping, c.statusMapping);
  const mappingChanged = JSON.stringify(side.mapping) !== JSON.stringify(c.statusMapping);
  const saved = await services.admin.saveConnection(c, { baseUrl, credentials: change.credentials ? credentials : undefined, statusMapping: side.mapping });
  // A full sync rewrites the stored statuses and tickets under the new mapping (an incremental one would not).
  if (mappingChanged) await services.queue.add('sync.connection', { tenantId: c.tenantId, connectionId: c.id, full: true }, { jobId: `sync-${c.id}-mapping-${Date.now()}`, attempts: 1 });
  return { connection: saved, side };
}
