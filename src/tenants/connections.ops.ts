/**
 * Internal tooling (admin token, GraphQL only): connections checked before they are saved, updated and
 * removed; tenants updated and removed; grants removed; the connectors and grant keys listed.
 */
import { CONNECTION_KINDS, type Connection } from '../../entities';
import type { AppConfig } from '../config/config';
import { GRANT_KEYS } from '../access/caller';
import { CONNECTOR_NAMES, capabilitiesOf, credentialNames, isConnectorName, readConnector } from '../connectors/registry';
import { operationsUsing, type Operation } from '../operations/operation';
import { text, z } from '../shared/request';
import { addConnection, changeConnection } from './connection-save';
import { connectionInfos } from './tenant-status';
import * as S from './tenant.schemas';
import type { AccessService } from '../access/access.service';
import type { SandboxSimulators } from '../simulators';
import type { SyncJobs } from '../sync/sync-jobs';
import type { WebhooksService } from '../webhooks/webhooks.service';
import type { JobQueue } from '../../jobs/queue/types';
import type { AdminService } from './admin.service';
import type { TenantsStore } from './tenants.store';
import type { ConnectionStates } from '../events/connection-states.store';

/** The services these operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface ConnectionAdminServices {
  access: AccessService;
  admin: AdminService;
  config: Pick<AppConfig, 'webhookAllowLoopback' | 'publicUrl' | 'sandboxVendorBaseUrl'>;
  queue: JobQueue;
  simulators: SandboxSimulators | null;
  syncJobs: SyncJobs;
  tenantsStore: TenantsStore;
  webhooks: Pick<WebhooksService, 'resolve'>;
  /** `connection.removed` in the removal's transaction. */
  connectionStates: Pick<ConnectionStates, 'removedIn'>;
}
const defineOperation = operationsUsing<ConnectionAdminServices>();

const ConnectorName = z.enum(CONNECTOR_NAMES as [string, ...string[]]).openapi('ConnectorName', { description: 'A connector (vendor system) the service speaks to.' });
const ConnectionKind = z.enum(CONNECTION_KINDS).openapi('ConnectionKind', { description: 'What a connection is: a PSA, an RMM or a distributor.' });

const mappingInput = z.array(S.StatusMappingEntry).max(500).nullable().optional();
const testFlag = z.boolean().default(false).openapi({ description: 'Make one authenticated call to the vendor before saving; a refusal names the vendor\'s answer and nothing is saved.' });

const CreateConnectionInput = z.object({
  tenant_id: z.string().max(100),
  kind: ConnectionKind,
  connector: ConnectorName,
  base_url: text(2048).openapi({ description: 'The vendor API root (the URL its API paths start from). Public https only.' }),
  credentials: S.credentialsInput(credentialNames()),
  status_mapping: mappingInput.openapi({ description: 'Vendor status name -> canonical status. Omitted: derived from the vendor\'s closed flags (see ConnectionSaved.status_mapping_source).' }),
  test: testFlag,
}).strict().openapi('CreateConnectionInput');

const UpdateConnectionInput = z.object({
  id: z.string().max(100),
  base_url: text(2048).nullable().optional(),
  credentials: S.credentialsInput(credentialNames()).nullable().optional()
    .openapi({ description: 'Replaces every credential of the connection (all that its connector needs).' }),
  status_mapping: mappingInput.openapi({ description: 'Replaces the mapping; an empty list derives it again from the vendor\'s closed flags; omitted keeps it.' }),
  test: testFlag,
}).strict().openapi('UpdateConnectionInput');

const ConnectionSaved = S.ConnectionInfo.extend({
  status_mapping: z.array(S.StatusMappingEntry).openapi({ description: 'The mapping the connection now has.' }),
  status_mapping_source: z.enum(['given', 'derived', 'kept', 'none']).openapi({
    description: 'given: from the request; derived: closed flag -> closed, the first open status of each board (lowest sort order) -> new, other open statuses -> in_progress; kept: unchanged; none: the connector reads no statuses.',
  }),
  unmapped_statuses: z.array(z.string()).openapi({ description: 'Vendor statuses (not flagged closed) the mapping leaves out: their tickets read status null and cannot be set by canonical status.' }),
  tested: z.boolean().openapi({ description: 'Whether the vendor answered an authenticated call before saving.' }),
}).strict().openapi('ConnectionSaved');

const Deleted = z.object({ id: z.string(), deleted: z.boolean() }).strict().openapi('Deleted');

const admin = { tag: 'Admin', role: 'admin' as const, errors: [] };

const entries = (m: Record<string, string>) => Object.entries(m).map(([vendor_status, canonical]) => ({ vendor_status, canonical: canonical as 'new' }));
const asMapping = (list: { vendor_status: string; canonical: string }[]) => Object.fromEntries(list.map((e) => [e.vendor_status, e.canonical]));

async function savedAnswer(services: ConnectionAdminServices, c: Connection, side: { mapping: Record<string, string>; source: string; unmapped: string[] }, tested: boolean) {
  const access = await services.access.tenantAccess({ kind: 'admin' }, c.tenantId);
  const info = (await connectionInfos(services.tenantsStore, access, services.syncJobs)).find((x) => x.id === c.id)!;
  return { ...info, status_mapping: entries(side.mapping), status_mapping_source: side.source as 'given', unmapped_statuses: side.unmapped, tested };
}

const createConnection = defineOperation({
  ...admin, name: 'create_connection', kind: 'mutation', summary: 'Connect a vendor system to a tenant',
  description: 'Refused at once (422 validation, details.field) for credentials its connector does not take or leaves empty, and for a base URL the outbound guard refuses; with test: true, also when the vendor refuses one authenticated call. A PSA\'s statuses are read to derive or check the status mapping.',
  body: CreateConnectionInput,
  responses: [{ status: 200, schema: ConnectionSaved, description: 'The connection (credentials are never returned), its status mapping and the statuses it leaves unmapped.' }],
  handle: async ({ body }, { services }) => {
    const tenant = await services.admin.findTenant(body.tenant_id);
    const { connection: c, side } = await addConnection(services, {
      tenantId: tenant.id, kind: body.kind, connector: body.connector, baseUrl: body.base_url, credentials: body.credentials,
      test: body.test, statusMapping: body.status_mapping ? asMapping(body.status_mapping) : undefined,
    });
    return savedAnswer(services, c, side, body.test);
  },
});

const updateConnection = defineOperation({
  ...admin, name: 'update_connection', kind: 'mutation', summary: "Change a connection's base URL, credentials or status mapping",
  description: 'The same checks as create_connection; nothing is saved when one fails.',
  body: UpdateConnectionInput,
  responses: [{ status: 200, schema: ConnectionSaved, description: 'The connection after the change.' }],
  handle: async ({ body }, { services }) => {
    const c = await services.admin.findConnection(body.id);
    const { connection: saved, side } = await changeConnection(services, c, {
      baseUrl: body.base_url ?? undefined, credentials: body.credentials ?? undefined, test: body.test,
      statusMapping: body.status_mapping ? asMapping(body.status_mapping) : undefined,
    });
    return savedAnswer(services, saved, side, body.test);
  },
});

const deleteConnection = defineOperation({
  ...admin, name: 'delete_connection', kind: 'mutation', summary: 'Remove a connection with its records, grants, links, events and sync schedule', flattenBody: true,
  description: 'Ticket create no longer fans out to it. The tenant\'s audit log keeps its entries.',
  body: z.object({ id: z.string().max(100) }).strict().openapi('DeleteConnectionBody'),
  responses: [{ status: 200, schema: Deleted, description: 'The removed connection.' }],
  handle: async ({ body }, { services }) => {
    const c = await services.admin.findConnection(body.id);
    await services.tenantsStore.removeConnection(c, (m) => services.connectionStates.removedIn(m, c));
    services.access.invalidate();
    return { id: c.id, deleted: true };
  },
});

const updateTenant = defineOperation({
  ...admin, name: 'update_tenant', kind: 'mutation', summary: "Rename a tenant or change its slug", flattenBody: true,
  body: z.object({ id: z.string().max(100), name: text(200).min(1).nullable().optional(), slug: text(63).nullable().optional() }).strict().openapi('UpdateTenantBody'),
  responses: [{ status: 200, schema: S.TenantCreated, description: 'The tenant.' }],
  handle: async ({ body }, { services }) => {
    const t = await services.admin.updateTenant(body.id, { name: body.name, slug: body.slug });
    return { id: t.id, name: t.name, slug: t.slug, sandbox: t.sandbox };
  },
});

const deleteTenant = defineOperation({
  ...admin, name: 'delete_tenant', kind: 'mutation', summary: 'Remove a tenant and everything of it', flattenBody: true,
  description: 'Connections, records, events, audit log, grants, webhooks and MSP keys go with it: nothing of the tenant stays readable, and its MSP keys stop working at once.',
  body: z.object({ id: z.string().max(100) }).strict().openapi('DeleteTenantBody'),
  responses: [{ status: 200, schema: Deleted, description: 'The removed tenant.' }],
  handle: async ({ body }, { services }) => {
    const t = await services.admin.findTenant(body.id);
    await services.tenantsStore.removeTenant(t);
    services.access.invalidate();
    return { id: t.id, deleted: true };
  },
});

const removeGrant = defineOperation({
  ...admin, name: 'remove_grant', kind: 'mutation', summary: "Remove an ISV's grant on one connection", flattenBody: true,
  body: z.object({ isv_id: z.string().max(100), connection_id: z.string().max(100) }).strict().openapi('RemoveGrantBody'),
  responses: [{ status: 200, schema: z.object({ isv_id: z.string(), connection_id: z.string(), removed: z.boolean() }).strict().openapi('GrantRemoved'), description: 'Whether a grant was removed.' }],
  handle: async ({ body }, { services }) => ({ ...body, removed: await services.admin.removeGrant(body.isv_id, body.connection_id) }),
});

const ConnectorList = z.object({
  connectors: z.array(z.object({
    name: ConnectorName, kind: ConnectionKind,
    credentials: z.array(z.string()).openapi({ description: 'The credentials a connection of this connector needs (all non-empty).' }),
    writes: z.array(z.string()),
  }).strict().openapi('ConnectorInfo')),
  grant_keys: z.array(z.string()).openapi({ description: 'Every grant key set_grant and set_grants take.' }),
}).strict().openapi('ConnectorList');

const listConnectors = defineOperation({
  ...admin, name: 'connectors', kind: 'query', summary: 'The connectors, the credentials each needs, and the grant keys',
  responses: [{ status: 200, schema: ConnectorList, description: 'Connectors and grant keys.' }],
  handle: async () => ({
    connectors: CONNECTOR_NAMES.filter(isConnectorName).map((name) => ({
      name, kind: readConnector(name).kind, credentials: [...capabilitiesOf(name).credentials], writes: [...capabilitiesOf(name).writes],
    })),
    grant_keys: [...GRANT_KEYS],
  }),
});

export const CONNECTION_ADMIN_OPERATIONS: Operation[] = [
  createConnection, updateConnection, deleteConnection, updateTenant, deleteTenant, removeGrant, listConnectors,
];
