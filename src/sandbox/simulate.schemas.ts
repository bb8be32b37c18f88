/** POST /sandbox/simulate (our addition): an MSP-side change in a sandbox simulator, synced, answered as its events. */
import { text, z } from '../shared/request';
import { Event } from '../events/events.schemas';

const target = text(100).min(1).optional()
  .openapi({ description: "The vendor's id of the record (`source_id` in the lists). Absent: a fixture record the change fits." });

export const CHANGE_KINDS = ['ticket_status', 'ticket_note', 'ticket_close', 'ticket_reopen', 'device_offline', 'company_renamed'] as const;

/** Fields that only one kind takes (one flat object: GraphQL inputs cannot be unions). */
const ONLY_FOR = { status: 'ticket_status', text: 'ticket_note', name: 'company_renamed' } as const;

const Change = z.object({
  kind: z.enum(CHANGE_KINDS),
  target_id: target,
  status: text(100).min(1).optional().openapi({ description: "ticket_status only: the vendor status name to move to; absent: the board's next open status." }),
  text: text(2000).min(1).optional().openapi({ description: 'ticket_note only: the note text.' }),
  name: text(200).min(1).optional().openapi({ description: 'company_renamed only: the new name; absent: the old name with " (renamed)".' }),
}).strict().superRefine((c, ctx) => {
  for (const [field, kind] of Object.entries(ONLY_FOR)) {
    if (c[field as keyof typeof ONLY_FOR] !== undefined && c.kind !== kind) {
      ctx.addIssue({ code: 'custom', path: [field], message: `only ${kind} takes ${field}` });
    }
  }
}).openapi('SimulatedChange', {
  description: 'ticket_status → ticket.updated; ticket_note → ticket.noted; ticket_close → ticket.closed; ticket_reopen → ticket.reopened; ' +
    'device_offline → device.updated (and health when it needs attention); company_renamed → company.updated.',
});

export const SimulateBody = z.object({
  tenant_id: text(200).min(1).openapi({ description: 'A sandbox tenant.' }),
  change: Change,
}).strict().openapi('SandboxSimulateBody');

export const SimulateResult = z.object({
  tenant_id: z.string(),
  connection_id: z.string(),
  target_id: z.string().openapi({ description: "The vendor's id of the record that changed." }),
  events: z.array(Event).openapi({ description: 'The events the change produced (those this key may see), oldest first; also delivered to webhooks.' }),
}).strict().openapi('SandboxSimulateResult');
