/** Sync now, and sandbox reset (which re-syncs): what each connection fetched and changed. */
import { z } from '../shared/request';

const ConnectionSyncReport = z.object({
  connection_id: z.string(), connector: z.string(), ok: z.boolean(), error: z.string().nullable(),
  resources: z.array(z.object({
    resource: z.string(), mode: z.string(), fetched: z.number().int(), created: z.number().int(),
    updated: z.number().int(), unchanged: z.number().int(),
    quarantined: z.number().int().openapi({ description: 'Records the store could not hold even escaped: kept aside, reported in status and the audit log; the rest of the sync went on.' }),
    deleted: z.number().int().optional().openapi({ description: 'Records the vendor no longer lists (after a complete id listing): removed from every list, each raising `<family>.deleted` for tickets, devices and companies.' }),
  }).strict().openapi('ResourceSyncReport')),
}).strict().openapi('ConnectionSyncReport');

export const SyncBody = z.object({ full: z.boolean().default(false).openapi({ description: 'Ignore watermarks: refetch everything.' }) }).strict().openapi('SyncBody');
export const SyncResult = z.object({
  tenant_id: z.string(), sandbox: z.boolean(), ok: z.boolean(), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SyncResult');

export const SandboxResetBody = z.object({ tenant_id: z.string().max(200).openapi({ description: 'A sandbox tenant to re-seed.' }) }).strict().openapi('SandboxResetBody');
export const SandboxResetResult = z.object({
  tenant_id: z.string(), sandbox: z.literal(true), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SandboxResetResult');

