/**
 * Ask (docs/architecture.md, Device write and ask): the question, the structured query it becomes, and the answer. The
 * structured query is the one contract both engines (the deterministic parser and the optional model)
 * must produce; it is validated by `AskQuery` before anything runs, so a filter or resource that does
 * not exist is refused, never guessed at.
 */
import { CANONICAL_PRIORITIES, CANONICAL_STATUSES } from '../connectors/canonical';
import { rfc3339 } from '../shared/dates';
import { text, z } from '../shared/request';

export const AskBody = z.object({
  question: text(500).min(1).openapi({ description: 'A question of the MSP about its own data, in plain English (see GET /tenants/{tenant_id}/ask/examples).' }),
}).strict().openapi('AskBody');

/** Resources the ask engines read. Charges come later: a new entry here and in ask.resources.ts. */
export const ASK_RESOURCES = ['tickets', 'devices', 'applications', 'incidents', 'agreements'] as const;
export type AskResource = (typeof ASK_RESOURCES)[number];

/** `open` is every ticket that is neither resolved nor closed (unmapped statuses included). */
export const ASK_TICKET_STATUSES = ['open', ...CANONICAL_STATUSES] as const;
export const ASK_AGREEMENT_STATUSES = ['active', 'cancelled', 'expired', 'inactive', 'unknown'] as const;

const name = text(200).min(1);

export const AskFilters = z.object({
  company: name.nullable().optional().openapi({ description: "A company name, matched case-insensitively against the store's company names (for applications and incidents: the company of their device)." }),
  status: z.enum(ASK_TICKET_STATUSES).nullable().optional().openapi({ description: 'Tickets: canonical status, or `open` (not resolved, not closed).' }),
  priority: z.enum(CANONICAL_PRIORITIES).nullable().optional().openapi({ description: 'Tickets: canonical priority.' }),
  agreement_status: z.enum(ASK_AGREEMENT_STATUSES).nullable().optional().openapi({ description: 'Agreements: status.' }),
  online: z.boolean().nullable().optional().openapi({ description: 'Devices: online (true) or offline (false).' }),
  needs_attention: z.boolean().nullable().optional().openapi({ description: 'Devices: has an active alert.' }),
  patches_pending: z.boolean().nullable().optional().openapi({ description: 'Devices: true for at least one pending patch, false for none.' }),
  os: z.enum(['windows', 'macos', 'linux']).nullable().optional().openapi({ description: 'Devices: operating system family.' }),
  name: name.nullable().optional().openapi({ description: 'Applications and agreements: the name contains this text (case-insensitive).' }),
  opened_since: rfc3339.nullable().optional().openapi({ description: 'Tickets and incidents opened, applications installed, agreements started at or after this time.' }),
  opened_before: rfc3339.nullable().optional().openapi({ description: 'The same, strictly before this time.' }),
}).strict().openapi('AskFilters');
export type AskFilters = z.infer<typeof AskFilters>;
export type AskFilterName = keyof AskFilters;

/** Which filters each resource has: a filter a resource does not have is refused. */
export const FILTERS_OF: Record<AskResource, readonly AskFilterName[]> = {
  tickets: ['company', 'status', 'priority', 'opened_since', 'opened_before'],
  devices: ['company', 'online', 'needs_attention', 'patches_pending', 'os'],
  applications: ['company', 'name', 'opened_since', 'opened_before'],
  incidents: ['company', 'opened_since', 'opened_before'],
  agreements: ['company', 'agreement_status', 'name', 'opened_since', 'opened_before'],
};
export const GROUPS_OF: Record<AskResource, readonly ('company' | 'name')[]> = {
  tickets: ['company'], devices: ['company'], applications: ['company', 'name'], incidents: ['company'], agreements: ['company'],
};

export const ASK_LIMIT_MAX = 100;

export const AskQuery = z.object({
  resource: z.enum(ASK_RESOURCES),
  filters: AskFilters,
  aggregate: z.enum(['count', 'list', 'top']).openapi({ description: '`count`: how many; `list`: the records (newest first, or by name); `top`: the `limit` largest groups by `group_by`.' }),
  group_by: z.enum(['company', 'name']).nullable().optional().openapi({ description: 'For `top`: group by company, or (applications) by application name.' }),
  order: z.enum(['newest', 'oldest', 'name']).nullable().optional().openapi({ description: 'For `list`. Default: newest for tickets and incidents, name otherwise.' }),
  limit: z.number().int().min(1).max(ASK_LIMIT_MAX).nullable().optional().openapi({ description: `For \`list\` and \`top\`: how many (1 to ${ASK_LIMIT_MAX}).` }),
}).strict().superRefine((q, ctx) => {
  const allowed = FILTERS_OF[q.resource];
  for (const [k, v] of Object.entries(q.filters)) {
    if (v != null && !allowed.includes(k as AskFilterName)) {
      ctx.addIssue({ code: 'custom', path: ['filters', k], message: `${q.resource} have no ${k} filter (they have: ${allowed.join(', ')})` });
    }
  }
  if (q.aggregate === 'top' && !q.group_by) ctx.addIssue({ code: 'custom', path: ['group_by'], message: 'top needs group_by' });
  if (q.group_by && q.aggregate !== 'top') ctx.addIssue({ code: 'custom', path: ['group_by'], message: 'group_by is only for top' });
  if (q.group_by && !GROUPS_OF[q.resource].includes(q.group_by)) ctx.addIssue({ code: 'custom', path: ['group_by'], message: `${q.resource} cannot be grouped by ${q.group_by}` });
  if (q.order && q.aggregate !== 'list') ctx.addIssue({ code: 'custom', path: ['order'], message: 'order is only for list' });
}).openapi('AskQuery', { description: 'The structured query a question became; validated before it runs.' });
export type AskQuery = z.infer<typeof AskQuery>;

export const AskCitation = z.object({
  resource: z.enum(ASK_RESOURCES),
  id: z.string().openapi({ description: 'Our id of the record.' }),
  source_id: z.string().openapi({ description: 'The vendor id (`source_id` in the list read).' }),
  label: z.string(),
}).strict().openapi('AskCitation');

export const AskGroup = z.object({ name: z.string(), count: z.number().int() }).strict().openapi('AskGroup');

export const AskAnswer = z.object({
  answered: z.boolean(),
  answer: z.string().openapi({ description: 'One or two English sentences; every figure in it was counted from the records cited.' }),
  query: AskQuery.nullable().openapi({ description: 'The structured query that was run (null when nothing ran).' }),
  records: z.array(AskCitation).openapi({ description: 'Every record the answer rests on, up to `cited_cap` (the answer says when it is capped).' }),
  count: z.number().int().nullable().openapi({ description: 'How many records matched (count and list), or were counted in the groups (top).' }),
  groups: z.array(AskGroup).openapi({ description: 'For top: the groups, largest first.' }),
  records_capped: z.boolean().openapi({ description: 'True when more records matched than are cited.' }),
  cited_cap: z.number().int(),
  as_of: z.string().nullable().openapi({ description: 'Last sync of the lists used (the oldest among their connections); null when one never synced.' }),
  engine: z.enum(['parser', 'model']),
  suggestions: z.array(z.string()).openapi({ description: 'Example questions this service can answer, when `answered` is false.' }),
}).strict().openapi('AskAnswer');
export type AskAnswer = z.infer<typeof AskAnswer>;

export const AskExample = z.object({
  question: z.string(),
  query: AskQuery,
}).strict().openapi('AskExample');

export const AskFamily = z.object({
  name: z.string(),
  pattern: z.string(),
  examples: z.array(AskExample),
}).strict().openapi('AskFamily');

export const AskExamples = z.object({
  families: z.array(AskFamily),
  resources: z.array(z.string()),
  time_windows: z.array(z.string()),
  words: z.array(z.string()).openapi({ description: 'Every word the default engine understands besides company and application names.' }),
  cited_cap: z.number().int(),
  engine: z.enum(['parser', 'model']),
}).strict().openapi('AskExamples');
