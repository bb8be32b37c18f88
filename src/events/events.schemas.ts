/**
 * REST schemas of the events feed (zod: request validation, response description, OpenAPI).
 * Event holds exactly the fields of the interface document's Event, all optional and nullable
 * except `detail`; undeclared properties are refused.
 */
import { listEnvelope, pageQuery } from '../shared/paging';
import { isUuid, z } from '../shared/request';
import { EVENTS_CURSOR, ISV_EVENTS_CURSOR } from './events.service';
import type { ListCursor } from '../shared/paging';
import { KIND_FILTERS } from '../access/event-kinds';

const text = () => z.string().nullable().optional();

export const Event = z.object({
  id: text(),
  event_id: text(),
  tenant_id: text().openapi({ description: 'The tenant (MSP) the event is about; null only for an ISV\'s own event of no tenant (a connect link for a new MSP that expired), listed by `GET /events`.' }),
  connection_id: text(),
  kind: text().openapi({ description: 'ticket.created|updated|noted|closed|reopened|deleted, device.created|updated|deleted, company.created|updated|deleted, health, sandbox_reset, and (our addition, family `connection`, no grant needed) connection.added|removed|credentials_failed|permission_missing|sync_failing|restored, connect_session.completed|expired: one per change of a connection\'s state, never one per failed sync. `*.deleted` (our addition): the vendor no longer lists the record; it has left every list; same grants as its family.' }),
  type: text().openapi({ description: 'Health rows: `attention_needed` or `resolved`.' }),
  occurred_at: text().openapi({ description: 'RFC 3339 UTC timestamp: when the vendor says the change happened.' }),
  actor: text(),
  summary: text(),
  subject_ref: text().openapi({ description: 'The record\'s id in the vendor system.' }),
  incident_id: text(),
  canonical_ticket_id: text(),
  canonical_device_id: text(),
  canonical_company_id: text().openapi({ description: 'Company events carry this id because companies cannot be read.' }),
  previous_status: text().openapi({ description: 'Tickets: the status before. Connection events: the state before (ok, credentials_failing, permission_missing, sync_failing).' }),
  new_status: text().openapi({ description: 'Tickets: the status after. Connection events: the state after.' }),
  vendor: text(),
  vendor_id: text(),
  vendor_url: text().openapi({ description: 'A link to the record in the vendor\'s UI, when one can be derived.' }),
  detail: z.record(z.string(), z.unknown()).optional().openapi({ description: 'What changed (field names), never the payload.' }),
  position: z.string().optional().openapi({ description: "Our addition: the event's place in the tenant's feed (a decimal integer that only grows). Events are listed in this order; `after=<id>` resumes right after the event with that id." }),
}).strict().openapi('Event');

export const EventList = listEnvelope('EventList', 'connections/events', Event);

const eventsQuery = (codec: ListCursor) => pageQuery(codec, { updatedSince: true }, {
  kind: z.enum(KIND_FILTERS as [string, ...string[]]).nullable().optional()
    .openapi({ description: 'An exact kind, a family (`ticket`, `device`, `company`, `health`, `connection`) or `sandbox_reset`; absent: every kind this key is granted (the `connection` family and `sandbox_reset` need no grant).' }),
  after: z.string().refine(isUuid, { message: 'is not an event id' }).nullable().optional()
    .openapi({ description: 'Our addition: the `id` of the last event you processed; the page starts right after it. A poller that keeps the last id it saw never misses or repeats an event, whether or not `next_cursor` was null. Not together with `cursor`.', example: '4f6c1f1e-8a0e-4a53-9a51-0d8e6f0b6c11' }),
}).superRefine((q, ctx) => {
  if (q.after && q.cursor) ctx.addIssue({ code: 'custom', path: ['after'], message: 'give either cursor or after, not both' });
});

export const EventsQuery = eventsQuery(EVENTS_CURSOR);
/** `GET /events`: the same parameters, its own cursors. */
export const IsvEventsQuery = eventsQuery(ISV_EVENTS_CURSOR);
