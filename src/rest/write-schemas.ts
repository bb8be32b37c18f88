/** Request bodies of the writes (interface document "Request bodies", design.md section 6). */
import { z } from './schemas';

const dryRun = z.boolean().default(true).openapi({ description: 'Preview (default) or commit (false).' });
const idempotencyKey = z.string().min(1).max(200).nullable().optional()
  .openapi({ description: 'A replay with the same key returns the original result.' });
const vendorNative = z.record(z.string(), z.unknown()).nullable().optional()
  .openapi({ description: 'Vendor-native field bag; grant-checked; not guaranteed for every native field.' });

export const CreateTicketBody = z.object({
  company_name: z.string().min(1),
  summary: z.string().min(1),
  description: z.string().nullable().optional(),
  priority: z.string().min(1).default('medium').openapi({ description: 'low, medium, high, critical, or an id from ticket-priorities.' }),
  status: z.string().min(1).nullable().optional().openapi({ description: 'Canonical status or an id from ticket-statuses.' }),
  board: z.string().min(1).nullable().optional().openapi({ description: 'An id from ticket-boards.' }),
  project_source_id: z.string().min(1).nullable().optional(),
  vendor_native: vendorNative,
  dry_run: dryRun,
  idempotency_key: idempotencyKey,
}).strict().openapi('CreateTicketBody');

export const TicketWriteBody = z.object({
  ticket_ref: z.string().min(1).openapi({ description: 'PSA ticket id of a ticket in the link store.' }),
  action: z.enum(['update', 'note', 'close', 'reopen']),
  summary: z.string().min(1).nullable().optional(),
  description: z.string().nullable().optional(),
  status: z.string().min(1).nullable().optional(),
  priority: z.string().min(1).nullable().optional(),
  board: z.string().min(1).nullable().optional(),
  note: z.object({ text: z.string().min(1), internal: z.boolean().default(false) }).strict().nullable().optional(),
  evidence: z.string().min(1).nullable().optional().openapi({ description: 'Required for close; written as a resolution note.' }),
  vendor_native: vendorNative,
  dry_run: dryRun,
  idempotency_key: idempotencyKey,
}).strict().openapi('TicketWriteBody');

export const CreateTimeEntryBody = z.object({
  ticket_ref: z.string().min(1),
  hours: z.number().refine((h) => Number.isFinite(h) && h > 0, { message: 'must be finite and greater than 0' }),
  billable: z.boolean().openapi({ description: 'Stated by the caller, never guessed.' }),
  member: z.string().min(1).nullable().optional().openapi({ description: 'An id from the members list; required for a live commit on ConnectWise.' }),
  dry_run: dryRun,
  idempotency_key: idempotencyKey,
}).strict().openapi('CreateTimeEntryBody');

export const FINDING_KINDS = ['technical', 'organizational'] as const;
export const WRITE_BACK_TARGETS = ['service_ticket', 'project'] as const;

export const RouteFindingBody = z.object({
  kind: z.enum(FINDING_KINDS),
  title: z.string().min(1),
  severity: z.string().min(1),
  company_name: z.string().min(1),
  idempotency_key: z.string().min(1).max(200).openapi({ description: "The ISV's own stable finding id." }),
  description: z.string().nullable().optional(),
  project_source_id: z.string().min(1).nullable().optional(),
  dry_run: dryRun,
}).strict().openapi('RouteFindingBody');

export const RoutingConfigBody = z.object({
  overrides: z.partialRecord(z.enum(FINDING_KINDS), z.string().nullable())
    .openapi({ description: 'Finding kind -> service_ticket | project | null (null reverts to the recommendation).' }),
}).strict().openapi('RoutingConfigBody');

export const ResolveFindingBody = z.object({
  evidence: z.string().min(1).nullable().optional(),
  dry_run: dryRun,
}).strict().openapi('ResolveFindingBody');

export const WriteResult = z.record(z.string(), z.unknown()).openapi('WriteResult');
