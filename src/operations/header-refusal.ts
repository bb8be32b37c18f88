/**
 * A header create the interface document's rules forbid (agreement and project headers): the path
 * exists, so a caller gets the rule's own refusal (422) after authentication and tenant visibility, and
 * nothing else happens. One declaration serves both.
 */
import type { ZodType } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import { ServiceError } from '../errors/service-error';
import { ErrorBody } from '../errors/error-body.schemas';
import { TenantPath } from '../shared/request';
import { defineOperation, type Operation } from './operation';

export function headerRefusal(spec: {
  name: string; noun: 'agreement' | 'project'; rule: number; path: string; body: ZodType;
  code: ErrorCode; instead: string;
}): Operation {
  const message = `The service never creates ${spec.noun === 'agreement' ? 'an' : 'a'} ${spec.noun} header; ${spec.instead}.`;
  return defineOperation({
    name: spec.name, kind: 'mutation', summary: `Create ${spec.noun === 'agreement' ? 'an' : 'a'} ${spec.noun} header (always refused)`, tag: 'Writes', role: 'isv',
    // Only a refusal to answer: the graph has no field for it (the REST path is in the interface document).
    graph: false,
    description: `The service never creates ${spec.noun === 'agreement' ? 'an' : 'a'} ${spec.noun} header (interface document rule ${spec.rule}): every request answers 422 \`${spec.code}\`. ${spec.instead[0].toUpperCase()}${spec.instead.slice(1)}.`,
    http: { method: 'post', path: spec.path, documented: true },
    // Nothing is ever written, whoever calls: no grant guards a refusal.
    grant: 'none',
    path: TenantPath, body: spec.body,
    responses: [{ status: 422, schema: ErrorBody, description: `\`${spec.code}\`: the service never creates ${spec.noun === 'agreement' ? 'an' : 'a'} ${spec.noun} header.` }],
    errors: [spec.code, 'role_required'],
    handle: async () => { throw new ServiceError(spec.code, message); },
  });
}
