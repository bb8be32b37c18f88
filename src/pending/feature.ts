/**
 * Paths of the interface document whose features are not built yet. They are served (so the OpenAPI
 * document matches the routes) and answer 501 `not_supported` after authentication and tenant
 * visibility, never a 404 that would look like a typo. Each is replaced by its feature's operation.
 */
import type { FeatureModule } from '../feature';
import { ServiceError } from '../errors/service-error';
import { defineOperation, type HttpBinding } from '../operations/operation';
import { ErrorBody } from '../rest/schemas';
import { TenantPath } from '../shared/request';

function pending(name: string, http: Omit<HttpBinding, 'documented'>, summary: string, tag: string) {
  return defineOperation({
    name, kind: http.method === 'get' ? 'query' : 'mutation', summary, tag, role: 'reader', graph: false,
    description: 'Not available on this server yet: answers 501 `not_supported`.',
    http: { ...http, documented: true },
    path: TenantPath,
    responses: [{ status: 501, schema: ErrorBody, description: 'Not supported yet.' }],
    errors: ['not_supported'],
    handle: async () => { throw ServiceError.notSupported(`${summary} is not available on this server yet.`); },
  });
}

export const pendingFeature: FeatureModule = {
  name: 'pending',
  operations: [
    pending('identity_mappings', { method: 'get', path: '/tenants/{tenant_id}/identity/mappings' }, 'Customer mappings', 'Identity'),
    pending('identity_unmapped', { method: 'get', path: '/tenants/{tenant_id}/identity/unmapped' }, 'Unmatched customers', 'Identity'),
    pending('create_company', { method: 'post', path: '/tenants/{tenant_id}/companies' }, 'Create a company (match first)', 'Writes'),
  ],
};
