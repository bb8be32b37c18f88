/** POST /sandbox/simulate (our addition): an MSP-side change in a sandbox simulator, synced, answered as its events. */
import { text, z } from '../shared/request';
import { Event } from '../events/events.schemas';

const target = text(100).min(1).optional()
  .openapi({ description: "The vendor's id of the record (`source_id` in the lists). Absent: a fixture record the change fits." });

export const CHANGE_KINDS = ['ticket_status', 'ticket_note', 'ticket_close', 'ticket_reopen', 'device_offline', 'company_renamed', 'credentials_revoked', 'credentials_restored'] as const;

/** The changes made to a connection's credentials at the vendor (sandbox.service.ts, simulateCredentials), not to a record. */
export const CREDENTIAL_CHANGES = ['credentials_revoked', 'credentials_restored'] as const;
export type CredentialChange = (typeof CREDENTIAL_CHANGES)[number];
export const isCredentialChange = (kind: string): kind is CredentialChange => (CREDENTIAL_CHANGES as readonly string[]).includes(kind);

/** Fields that only some kinds take (one flat object: GraphQL inputs cannot be unions). */
const ONLY_FOR: Record<string, readonly string[]> = {
  status: ['ticket_status'], text: ['ticket_note'], name: ['company_renamed'], connection_id: CREDENTIAL_CHANGES,
  target_id: CHANGE_KINDS.filter((k) => !isCredentialChange(k)),
};

const Change = z.object({
  kind: z.enum(CHANGE_KINDS),
  target_id: target,
  status: text(100).min(1).optional().openapi({ description: "ticket_status only: the vendor status name to move to; absent: the board's next open status." }),
  text: text(2000).min(1).optional().openapi({ description: 'ticket_note only: the note text.' }),
  name: text(200).min(1).optional().openapi({ description: 'company_renamed only: the new name; absent: the old name with " (renamed)".' }),
  connection_id: text(100).min(1).optional().openapi({ description: "credentials_revoked and credentials_restored only: the sandbox connection whose credentials the vendor refuses (or accepts again); absent: the tenant's PSA." }),
}).strict().superRefine((c, ctx) => {
  for (const [field, kinds] of Object.entries(ONLY_FOR)) {
    if (c[field as keyof typeof c] !== undefined && !kinds.includes(c.kind)) {
      ctx.addIssue({ code: 'custom', path: [field], message: `only ${kinds.join(', ')} ${kinds.length === 1 ? 'takes' : 'take'} ${field}` });
    }
  }
}).openapi('SimulatedChange', {
  description: 'ticket_status → ticket.updated; ticket_note → ticket.noted; ticket_close → ticket.closed; ticket_reopen → ticket.reopened; ' +
    'device_offline → device.updated (and health when it needs attention); company_renamed → company.updated; ' +
    'credentials_revoked → the vendor simulator answers 401 to the connection\'s credentials, so its sync fails → connection.credentials_failed; ' +
    'credentials_restored → it accepts them again, the sync succeeds → connection.restored.',
});

export const SimulateBody = z.object({
  tenant_id: text(200).min(1).openapi({ description: 'A sandbox tenant.' }),
  change: Change,
}).strict().openapi('SandboxSimulateBody');

export const SimulateResult = z.object({
  tenant_id: z.string(),
  connection_id: z.string(),
  target_id: z.string().openapi({ description: "The vendor's id of the record that changed; for credentials_revoked and credentials_restored, the connection's id." }),
  events: z.array(Event).openapi({ description: 'The events the change produced (those this key may see), oldest first; also delivered to webhooks.' }),
}).strict().openapi('SandboxSimulateResult');
