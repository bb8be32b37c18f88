/**
 * The ids the examples of /openapi.json name: the running sandbox's (alpha tenant, sandbox ISV), read
 * when the document is asked for, so every id an example names exists now; placeholders without a sandbox.
 */
import type { DataSource } from 'typeorm';
import { sandboxExampleRows } from './example-ids.store';
import { PLACEHOLDER_IDS, type ExampleIds } from './examples';

export async function sandboxExampleIds(ds: DataSource | null): Promise<ExampleIds> {
  const rows = ds ? await sandboxExampleRows(ds) : null;
  if (!rows) return PLACEHOLDER_IDS;
  const { tenant, isv, grants, event, link, finding, charge, mapping, application, webhook, routing, book, match, unmatched, skipped, member } = rows;
  const overrides = typeof routing?.overrides === 'string' ? JSON.parse(routing.overrides) : routing?.overrides;
  return {
    tenantId: tenant.id,
    isvId: isv.id,
    grants: grants.length ? grants.map((g) => ({ connection_id: g.connectionId, keys: g.keys })) : PLACEHOLDER_IDS.grants,
    eventId: event?.id ?? null,
    ticketRef: link?.ticket_ref ?? null,
    memberRef: member?.member_ref ?? null,
    findingId: finding?.finding_id ?? null,
    chargeId: charge?.id ?? null,
    mapping: mapping ? { id: mapping.id, product: mapping.vendor_product_ref, agreement: mapping.agreement_source_id, line: mapping.line_source_id } : null,
    applicationId: application?.id ?? null,
    webhookId: webhook?.id ?? null,
    routingOverrides: (overrides ?? {}) as Record<string, string>,
    book: book.map((c) => ({ ref: c.ref, name: c.name, ...(c.domain ? { domain: c.domain } : {}) })),
    match: match ? { customer_ref: match.customer_ref, company_source_id: match.company_source_id } : null,
    unmatchedCustomer: unmatched?.ref ?? null,
    skippedCustomer: skipped?.subject ?? null,
  };
}
