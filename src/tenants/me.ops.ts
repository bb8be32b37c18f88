/**
 * `GET /me` (design: the ISV's console and its API twins): who the calling key belongs to. An ISV key
 * answers its ISV, an MSP key (`sk_msp_...`) its tenant; the admin token, through the graph, the operator.
 * Any key may ask; src/access decides who the caller is.
 */
import type { AccessService } from '../access/access.service';
import { operationsUsing, type Operation } from '../operations/operation';
import { z } from '../shared/request';

/** The services this operation uses, and all it sees of the service graph (src/operations/feature-module.ts). */
export interface MeServices {
  access: AccessService;
}
const defineOperation = operationsUsing<MeServices>();

export const Me = z.object({
  kind: z.enum(['isv', 'tenant', 'operator']).openapi({ description: '`isv`: an ISV key; `tenant`: an MSP key (sk_msp_...), its tenant; `operator`: the admin token (GraphQL only).' }),
  id: z.string().openapi({ description: 'The ISV\'s id, or the tenant\'s (as in GET /tenants); `admin_token` for the operator.' }),
  name: z.string().openapi({ description: 'The ISV\'s or the tenant\'s name.' }),
}).strict().openapi('Me', { description: 'Who the calling key belongs to.' });

const me = defineOperation({
  name: 'me', kind: 'query', summary: 'Who this key belongs to', tag: 'Tenants', role: 'reader',
  description: 'Answers the calling key\'s ISV (`kind: "isv"`) or, for an MSP key, its tenant (`kind: "tenant"`), with its id and name. A cheap way for a program to check its key. Addition of this service.',
  http: { method: 'get', path: '/me', documented: false },
  query: z.object({}).strict(),
  responses: [{ status: 200, schema: Me, description: 'The key\'s ISV or tenant.' }],
  errors: [],
  handle: async (_input, { caller, services }) => services.access.identify(caller),
});

export const ME_OPERATIONS: Operation[] = [me];
