/** Connect sessions' requests and answers (docs/architecture.md, Connect sessions and console). Our addition. */
import { CONNECTION_KINDS } from '../../entities';
import { GRANT_KEYS } from '../access/caller';
import { grantKeyList } from '../access/grant-words';
import { listCursor, listEnvelope } from '../shared/paging';
import { pathId, text, z } from '../shared/request';

const ts = z.string().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });

export const CONNECT_SESSIONS_CURSOR = listCursor('connect-sessions', ['time', 'uuid']);

export const ConnectSessionPath = z.object({ session_id: pathId('session_id', 'A connect session id.') }).strict();

export const CreateConnectSessionBody = z.object({
  tenant_id: z.string().max(100).optional().openapi({ description: 'An existing tenant you see: the session adds or repairs its connections (their data is kept). Give this or `msp_name`.' }),
  msp_name: text(200).min(1).optional().openapi({ description: 'The MSP\'s name: completing the session creates its tenant. Give this or `tenant_id`.' }),
  kinds: z.array(z.enum(CONNECTION_KINDS)).min(1).max(3).openapi({ description: 'The systems you ask the MSP to connect.' }),
  requested_grants: z.array(z.enum(GRANT_KEYS)).max(GRANT_KEYS.length).default([]).openapi({ description: `The grant keys you ask for; the MSP sees each in these words and may untick any: ${grantKeyList()}. Each must be offered on one of \`kinds\`.` }),
  redirect_url: text(2048).optional().openapi({ description: 'https URL the page sends the MSP to when done, with `connect_session_id` and `state=completed` added.' }),
  expires_in_minutes: z.number().int().min(5).max(10_080).default(1440).openapi({ description: 'How long the link works: default 1440 (24 h), at most 10080 (7 days).' }),
}).strict().openapi('CreateConnectSessionBody');

const MissingPermission = z.object({
  kind: z.string(), connector: z.string(),
  permission: z.string().openapi({ description: 'The vendor permission, in the vendor\'s own terms.' }),
  capability: z.string().openapi({ description: 'What does not work without it (a connector capability: read, ticket.create, device.deploy, ...).' }),
  grants: z.array(z.string()).openapi({ description: 'The grant keys that cannot work without it (shown off on the page).' }),
  detail: z.string().nullable(),
}).strict().openapi('MissingPermission');

export const ConnectSessionView = z.object({
  id: z.string(),
  state: z.enum(['pending', 'completed', 'expired', 'cancelled']).openapi({ description: 'pending until the MSP presses Connect (or the link expires, or you cancel it).' }),
  tenant_id: z.string().nullable(),
  msp_name: z.string().nullable(),
  kinds: z.array(z.string()),
  requested_grants: z.array(z.string()),
  redirect_url: z.string().nullable(),
  created_at: ts, updated_at: ts, expires_at: ts, completed_at: ts.nullable(),
  connections: z.array(z.object({ id: z.string(), kind: z.string(), connector: z.string() }).strict().openapi('ConnectSessionConnection'))
    .openapi({ description: 'The connections the session made or repaired.' }),
  granted: z.array(z.object({ connection_id: z.string(), keys: z.array(z.string()) }).strict().openapi('ConnectSessionGrant'))
    .openapi({ description: 'The grants the MSP gave you.' }),
  missing_permissions: z.array(MissingPermission).openapi({ description: 'Vendor permissions the MSP\'s accounts lack, found by the connect page\'s checks.' }),
}).strict().openapi('ConnectSession');

export const CreatedConnectSession = z.object({
  id: z.string(),
  state: z.literal('pending'),
  connect_url: z.string().openapi({ description: 'Send this link to the MSP. It works once, until `expires_at`; it is in this answer only.' }),
  expires_at: ts,
}).strict().openapi('CreatedConnectSession');

export const ConnectSessionList = listEnvelope('ConnectSessionList', '/connect-sessions', ConnectSessionView);

export type ConnectSessionAnswer = z.infer<typeof ConnectSessionView>;

export const ReconnectPath = z.object({
  tenant_id: pathId('tenant_id', 'Tenant id, from GET /tenants.'),
  connection_id: pathId('connection_id', 'The connection to repair, from GET /tenants/{tenant_id}/connections.'),
}).strict();

export const RepairSession = z.object({
  connect_url: z.string().openapi({ description: 'The connect page of this repair, for an owner or admin of the tenant signed in to its console: Test new keys, then Connect renews them in place. Works once, within the hour.' }),
  expires_at: z.string(),
}).strict().openapi('RepairSession');
