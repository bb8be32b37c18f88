/**
 * Paths of the interface document whose features are not built yet. They are served (so the OpenAPI
 * document matches the routes) and answer 501 `not_supported` after authentication and tenant
 * visibility, never a 404 that would look like a typo. Each one is replaced by its feature's route.
 */
import { ServiceError } from '../errors/service-error';
import { defineRoute, type RouteDef } from './route';
import * as S from './schemas';

const PENDING: { method: RouteDef['method']; path: string; operationId: string; summary: string; tag: string }[] = [
  { method: 'post', path: '/tenants/{tenant_id}/tickets', operationId: 'create_ticket', summary: 'Create a ticket (preview or commit)', tag: 'Writes' },
  { method: 'post', path: '/tenants/{tenant_id}/tickets/write', operationId: 'write_ticket', summary: 'Update, note, close or reopen a linked ticket', tag: 'Writes' },
  { method: 'get', path: '/tenants/{tenant_id}/connections/events', operationId: 'list_events', summary: 'Change events and health rows', tag: 'Events' },
  { method: 'get', path: '/tenants/{tenant_id}/identity/mappings', operationId: 'identity_mappings', summary: 'Customer mappings', tag: 'Identity' },
  { method: 'get', path: '/tenants/{tenant_id}/identity/unmapped', operationId: 'identity_unmapped', summary: 'Unmatched customers', tag: 'Identity' },
  { method: 'get', path: '/tenants/{tenant_id}/routing', operationId: 'get_routing', summary: 'Write-back routing configuration', tag: 'Writes' },
  { method: 'put', path: '/tenants/{tenant_id}/routing', operationId: 'put_routing', summary: 'Set write-back target overrides', tag: 'Writes' },
  { method: 'post', path: '/tenants/{tenant_id}/companies', operationId: 'create_company', summary: 'Create a company (match first)', tag: 'Writes' },
  { method: 'post', path: '/tenants/{tenant_id}/findings/route', operationId: 'route_finding', summary: 'Route a finding to a ticket or project', tag: 'Writes' },
  { method: 'post', path: '/tenants/{tenant_id}/ticket-events/webhook', operationId: 'register_webhook', summary: 'Register the signed webhook', tag: 'Events' },
];

export const PENDING_ROUTES: RouteDef[] = PENDING.map((p) =>
  defineRoute({
    ...p,
    description: 'Not available on this server yet: answers 501 `not_supported`.',
    params: S.TenantPath,
    response: { status: 501, schema: S.ErrorBody, description: 'Not supported yet.' },
    errors: ['not_found', 'not_supported'],
    documented: true,
    handle: async ({ params, caller, graph }) => {
      // Visibility first: an invisible tenant stays a 404 here too.
      await graph.run('query C($tenant_id: ID!) { connections(tenant_id: $tenant_id) { sandbox } }', params, caller);
      throw ServiceError.notSupported(`${p.summary} is not available on this server yet.`);
    },
  }),
);
