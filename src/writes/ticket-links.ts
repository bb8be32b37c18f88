/**
 * The link store's rows for tickets a commit created (docs/architecture.md, Writes): only tickets created
 * through this service take write-back and time. Stored in the statement that stores the commit's
 * answer, so a write-back sent the moment the answer arrives finds them.
 */
import type { StoredWith } from './idempotency.store';

/** What a link needs of a target's outcome (write-pipeline.ts, TargetOutcome). */
interface Landed {
  ok: boolean;
  connection: { id: string };
  result: { ticketRef: string | null } | null;
}

export function ticketLinkRows(tenantId: string, isvId: string, outcomes: Landed[], findingId: string | null, target: string): StoredWith[] {
  return outcomes.filter((o) => o.ok && o.result?.ticketRef).map((o) => {
    const params = [tenantId, o.connection.id, isvId, o.result!.ticketRef, findingId, target];
    return (first: number) => ({
      sql: `INSERT INTO ticket_links (tenant_id, connection_id, isv_id, ticket_ref, finding_id, target)
            VALUES (${params.map((_, i) => `$${first + i}`).join(', ')})
            ON CONFLICT ON CONSTRAINT uq_ticket_links_ref DO UPDATE
              SET isv_id = EXCLUDED.isv_id, finding_id = EXCLUDED.finding_id, target = EXCLUDED.target, updated_at = now()`,
      params,
    });
  });
}
