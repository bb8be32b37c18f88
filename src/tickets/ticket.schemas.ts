/**
 * Ticket writes, time and findings: request bodies (interface document "Request bodies", docs/architecture.md,
 * Writes) and their typed results. A commit (dry_run false) of a write that takes idempotency_key
 * must carry one; without it the request is a 422 HTTPValidationError and nothing is written.
 */
import { commitResult, fanOutResult, keyedWrite, previewResult, WritePreview } from '../operations/write-results';
import { text, z } from '../shared/request';

export const FINDING_KINDS = ['technical', 'organizational'] as const;
export const WRITE_BACK_TARGETS = ['service_ticket', 'project'] as const;

const vendorNative = z.record(z.string().max(200), z.unknown()).nullable().optional()
  .openapi({ description: 'Vendor-native field bag; grant-checked; not guaranteed for every native field.' });


export const CreateTicketBody = keyedWrite('CreateTicketBody', {
  company_name: text(200).min(1),
  summary: text(1000).min(1),
  description: text(100_000).nullable().optional(),
  priority: text(100).min(1).default('medium').openapi({ description: 'low, medium, high, critical, or an id from ticket-priorities.' }),
  status: text(100).min(1).nullable().optional().openapi({ description: 'Canonical status or an id from ticket-statuses.' }),
  board: text(100).min(1).nullable().optional().openapi({ description: 'An id from ticket-boards.' }),
  project_source_id: text(100).min(1).nullable().optional(),
  vendor_native: vendorNative,
});

export const TicketNote = z.object({ text: text(100_000).min(1), internal: z.boolean().default(false) }).strict().openapi('TicketNote');

export const TicketWriteBody = keyedWrite('TicketWriteBody', {
  ticket_ref: text(100).min(1).openapi({ description: 'PSA ticket id of a ticket in the link store.' }),
  action: z.enum(['update', 'note', 'close', 'reopen']),
  summary: text(1000).min(1).nullable().optional(),
  description: text(100_000).nullable().optional(),
  status: text(100).min(1).nullable().optional(),
  priority: text(100).min(1).nullable().optional(),
  board: text(100).min(1).nullable().optional(),
  note: TicketNote.nullable().optional(),
  evidence: text(100_000).min(1).nullable().optional().openapi({ description: 'Required for close; written as a resolution note.' }),
  vendor_native: vendorNative,
});

export const CreateTimeEntryBody = keyedWrite('CreateTimeEntryBody', {
  ticket_ref: text(100).min(1),
  hours: z.number().refine((h) => Number.isFinite(h) && h > 0, { message: 'must be finite and greater than 0' }),
  billable: z.boolean().openapi({ description: 'Stated by the caller, never guessed.' }),
  member: text(100).min(1).nullable().optional().openapi({ description: 'An id from the members list; required for a live commit on the connector that says so.' }),
});

/** A finding's severity and the ticket priority it becomes: the one mapping (no silent guess). */
export const SEVERITY_PRIORITY = {
  critical: 'critical', high: 'high', medium: 'medium', moderate: 'medium', low: 'low', info: 'low', informational: 'low',
} as const;
const SEVERITIES = Object.keys(SEVERITY_PRIORITY) as [keyof typeof SEVERITY_PRIORITY, ...(keyof typeof SEVERITY_PRIORITY)[]];
const severityHelp = `Severity of the finding; it sets the ticket priority: ${Object.entries(SEVERITY_PRIORITY).map(([s, p]) => `${s} -> ${p}`).join(', ')}.`;

export const RouteFindingBody = z.object({
  kind: z.enum(FINDING_KINDS),
  title: text(1000).min(1),
  severity: z.enum(SEVERITIES).describe(severityHelp),
  company_name: text(200).min(1),
  idempotency_key: text(200).min(1).openapi({ description: "The ISV's own stable finding id." }),
  description: text(100_000).nullable().optional(),
  project_source_id: text(100).min(1).nullable().optional(),
  dry_run: z.boolean().default(true).openapi({ description: 'Preview (default) or commit (false).' }),
}).strict().openapi('RouteFindingBody');

const target = z.enum(WRITE_BACK_TARGETS);
const kinds = <T extends z.ZodType>(t: T) => ({ technical: t, organizational: t });

export const RoutingConfigBody = z.object({
  overrides: z.object({ technical: text(50).nullable().optional(), organizational: text(50).nullable().optional() }).strict()
    .openapi('RoutingOverridesInput', { description: 'Finding kind -> service_ticket | project | null (null reverts to the recommendation).' }),
}).strict().openapi('RoutingConfigBody');

export const RoutingConfig = z.object({
  recommended: z.object(kinds(target.nullable())).strict().openapi('RoutingRecommended'),
  overrides: z.object({ technical: target.optional(), organizational: target.optional() }).strict().openapi('RoutingOverrides'),
  effective: z.object(kinds(target)).strict().openapi('RoutingEffective'),
  supported_targets: z.array(target),
}).strict().openapi('RoutingConfig');

export const ResolveFindingBody = z.object({
  evidence: text(100_000).min(1).nullable().optional(),
  dry_run: z.boolean().default(true).openapi({ description: 'Preview (default) or commit (false).' }),
}).strict().openapi('ResolveFindingBody');

const ignored = z.array(z.string()).openapi({ description: 'vendor_native keys that name canonical fields and were ignored.' });

export const TicketCreatePreview = previewResult('TicketCreatePreview', { ignored_fields: ignored });
export const TicketCreateResult = fanOutResult('TicketCreateResult', {
  ticket_ref: z.string().nullable().openapi({ description: 'The first created ticket (the PSA ticket id, for write-back and time).' }),
  ignored_fields: ignored,
});

const action = z.enum(['update', 'note', 'close', 'reopen']);
export const TicketWritePreview = previewResult('TicketWritePreview', { action, ticket_ref: z.string(), ignored_fields: ignored });
export const TicketWriteResult = commitResult('TicketWriteResult', {
  action, ticket_ref: z.string(), connection_id: z.string(), connector: z.string(),
  note_ref: z.string().nullable(), reconciled: z.boolean(), ignored_fields: ignored,
});

export const TimeEntryPreview = previewResult('TimeEntryPreview', { ticket_ref: z.string() });
export const TimeEntryResult = commitResult('TimeEntryResult', {
  time_entry_ref: z.string().nullable(), ticket_ref: z.string(), hours: z.number(), billable: z.boolean(),
  member: z.string().nullable(), connection_id: z.string(), connector: z.string(),
});

export const FindingRoutePreview = previewResult('FindingRoutePreview', { finding_id: z.string(), target });
export const FindingRouteResult = fanOutResult('FindingRouteResult', {
  finding_id: z.string(), target, project_source_id: z.string().nullable(), ticket_ref: z.string().nullable(), ignored_fields: ignored,
});

export const FindingResolveResult = z.object({
  dry_run: z.boolean(),
  finding_id: z.string(),
  auto_close: z.boolean().openapi({ description: 'psa.ticket.auto_close is on for at least one linked ticket.' }),
  closed: z.array(z.object({
    ticket_ref: z.string(), preview: WritePreview.nullable(), note_ref: z.string().nullable(),
  }).strict().openapi('ClosedTicket')),
  ticket_refs: z.array(z.string()),
}).strict().openapi('FindingResolveResult');
