/**
 * The request log (docs/architecture.md, Request log): every request made with the ISV's keys on REST,
 * MCP and the graph, newest first, and one request with its redacted bodies. Our addition to the
 * interface (its ISV console: Stripe's request logs, Merge's Logs). Recorded by src/requests/recorder.ts.
 */
import { isvOfCaller } from '../access/caller';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing } from '../operations/operation';
import type { SandboxService } from '../sandbox/sandbox.service';
import { envelopeOf } from '../shared/paging';
import { z } from '../shared/request';
import { RequestLogDetail, RequestLogList, RequestPath, RequestsQuery } from './requests.schemas';
import type { RequestLogService } from './requests.service';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface RequestsServices {
  requestLog: RequestLogService;
  sandbox: SandboxService | null;
}
const defineOperation = operationsUsing<RequestsServices>();

const tag = 'Request log';
const NOTE = 'Our addition to the interface. Every request made with your keys is recorded (REST, MCP and the graph; 401, 422 and 429 answers included, once the key is known), kept `REQUEST_LOG_DAYS` (default 14). The log\'s own reads are not recorded. An MSP key is refused (403 `role_required`): the log is the ISV\'s.';

const listRequests = defineOperation({
  name: 'list_requests', kind: 'query', summary: 'Your request log (newest first)', tag, role: 'isv', grant: 'none',
  description: `Requests made with any of your keys, newest first. Filters: \`status\` (\`422\`, or a class: \`4xx\`), \`route\` (the path template, as \`route\` shows it), \`tenant_id\`, \`since\`. An entry appears about a second after its answer. ${NOTE}`,
  http: { method: 'get', path: '/requests', documented: false },
  query: RequestsQuery,
  responses: [{ status: 200, schema: RequestLogList, description: 'One page of your requests.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => {
    const page = await ctx.services.requestLog.list(isvOfCaller(ctx.caller), { status: query.status, route: query.route, tenantId: query.tenant_id, since: query.since }, query);
    return envelopeOf('/requests', page, ctx.services.sandbox != null);
  },
});

const getRequest = defineOperation({
  name: 'get_request', kind: 'query', summary: 'One request of your log, with its bodies', tag, role: 'isv', grant: 'none',
  description: `Find a request by the \`request_id\` of its Error envelope or its \`X-Request-Id\` header. The bodies are cut at 64 KiB with every secret redacted: vendor credentials, API keys, webhook secrets, tokens, one-time links, and the \`Authorization\`, \`X-API-Key\` and cookie headers. Another ISV's request is 404. ${NOTE}`,
  http: { method: 'get', path: '/requests/{request_id}', documented: false },
  path: RequestPath, query: z.object({}).strict(),
  responses: [{ status: 200, schema: RequestLogDetail, description: 'The request, its answer and their redacted bodies.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => ctx.services.requestLog.get(isvOfCaller(ctx.caller), path.request_id),
});

export const requestsFeature: FeatureModule<RequestsServices> = { name: 'requests', operations: [listRequests, getRequest] };
