/** A stored event as the documented Event (`id` and `event_id` are both our id): the feed and webhook bodies. */
import { toRfc3339 } from '../shared/dates';
import type { EventRow } from './events.service';

export function toEvent(r: EventRow) {
  return {
    id: r.id as string, event_id: r.id as string, tenant_id: r.tenant_id as string | null, connection_id: r.connection_id as string | null,
    kind: r.kind as string | null, type: r.type as string | null,
    occurred_at: toRfc3339(r.occurred_at), actor: r.actor as string | null, summary: r.summary as string | null, subject_ref: r.subject_ref as string | null,
    incident_id: r.incident_id as string | null, canonical_ticket_id: r.canonical_ticket_id as string | null, canonical_device_id: r.canonical_device_id as string | null,
    canonical_company_id: r.canonical_company_id as string | null, previous_status: r.previous_status as string | null, new_status: r.new_status as string | null,
    vendor: r.vendor as string | null, vendor_id: r.vendor_id as string | null, vendor_url: r.vendor_url as string | null,
    detail: (r.detail ?? {}) as Record<string, unknown>,
    position: String(r.seq),
  };
}
