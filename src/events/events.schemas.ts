/**
 * REST schemas of the events feed (zod: request validation, response description, OpenAPI).
 * Event holds exactly the fields of the interface document's Event, all optional and nullable
 * except `detail`; undeclared properties are refused.
 */
import { cursorParam, limitParam, seqCursor, z } from '../shared/request';
import { KIND_FILTERS } from './event-kinds';

const text = () => z.string().nullable().optional();

export const Event = z.object({
  id: text(),
  event_id: text(),
  tenant_id: text(),
  connection_id: text(),
  kind: text().openapi({ description: 'ticket.created|updated|noted|closed|reopened|deleted, device.created|updated|deleted, company.created|updated|deleted, health, sandbox_reset. `*.deleted` (our addition): the vendor no longer lists the record; it has left every list; same grants as its family.' }),
  type: text().openapi({ description: 'Health rows: `attention_needed` or `resolved`.' }),
  occurred_at: text().openapi({ description: 'RFC 3339 UTC timestamp: when the vendor says the change happened.' }),
  actor: text(),
  summary: text(),
  subject_ref: text().openapi({ description: 'The record\'s id in the vendor system.' }),
  incident_id: text(),
  canonical_ticket_id: text(),
  canonical_device_id: text(),
  canonical_company_id: text().openapi({ description: 'Company events carry this id because companies cannot be read.' }),
  previous_status: text(),
  new_status: text(),
  vendor: text(),
  vendor_id: text(),
  vendor_url: text().openapi({ description: 'A link to the record in the vendor\'s UI, when one can be derived.' }),
  detail: z.record(z.string(), z.unknown()).optional().openapi({ description: 'What changed (field names), never the payload.' }),
}).strict().openapi('Event');

export const EventList = z.object({
  events: z.array(Event),
  sandbox: z.boolean(),
  next_cursor: z.string().nullable().optional(),
}).strict().openapi('EventList');

export const EventsQuery = z.object({
  kind: z.enum(KIND_FILTERS as [string, ...string[]]).nullable().optional()
    .openapi({ description: 'An exact kind, a family (`ticket`, `device`, `company`, `health`) or `sandbox_reset`; absent: every kind this key is granted.' }),
  cursor: cursorParam(seqCursor),
  limit: limitParam,
}).strict();
