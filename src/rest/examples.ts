/**
 * One example per operation, so "Try it out" in /docs works on the sandbox as it stands and never
 * changes it: writes are previews (dry_run true), or restate what is there (grants, routing, the book,
 * a match), and every id is one the running sandbox (alpha) holds now (example-ids.ts). An operation
 * with no preview whose real call would change the sandbox gets an example that is refused, with
 * `needs` saying what to send instead. Adding an operation = adding one entry here;
 * test/examples.test.ts runs every entry, fails on an operation without one, and fails when an
 * example changed any list.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Grant } from '../access/caller';
import { fixturesDir } from '../shared/project-root';

export interface ExampleIds {
  /** The sandbox alpha tenant (a full PSA, an RMM and a distributor). */
  tenantId: string;
  /** The sandbox ISV. */
  isvId: string;
  /** The sandbox ISV's grants on the alpha tenant, per connection. */
  grants: { connection_id: string; keys: string[] }[];
  /** Ids and values of the running sandbox (null: it holds none now). */
  eventId: string | null;
  /** A ticket the sandbox ISV created through the service (the link store), and a finding it routed. */
  ticketRef: string | null;
  /** An active member on the connection of that ticket (time entries name one). */
  memberRef: string | null;
  findingId: string | null;
  chargeId: string | null;
  mapping: { id: string; product: string; agreement: string; line: string } | null;
  applicationId: string | null;
  webhookId: string | null;
  routingOverrides: Record<string, string>;
  book: { ref: string; name: string; domain?: string }[];
  match: { customer_ref: string; company_source_id: string } | null;
  unmatchedCustomer: string | null;
  skippedCustomer: string | null;
}

export interface OperationExample {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  /** The key "Try it out" needs: the sandbox ISV key unless `msp` (the tenant's MSP key). */
  key?: 'isv' | 'msp';
  /**
   * The example names something that exists only after another call (a webhook, a ticket the service
   * created): on a fresh sandbox it gets a documented coded refusal, and this says which call comes first.
   */
  needs?: string;
  /** The status the example answers when it is not a success (an operation that exists to refuse). */
  status?: number;
  /**
   * Why no request can succeed: the operation exists to refuse (a header create the service never makes).
   * Stated in `x-example-needs` too, so "Try it out" does not read as broken.
   */
  refuses?: string;
}

/** The sandbox ISV's customer book on alpha, as the fixtures seed it. */
const SANDBOX_BOOK = JSON.parse(fs.readFileSync(path.join(fixturesDir(), 'sandbox-alpha', 'isv-book.json'), 'utf8')) as ExampleIds['book'];

/** Placeholders when no sandbox runs (the checked-in schema/openapi.json): well-formed ids that name nothing. */
export const PLACEHOLDER_IDS: ExampleIds = {
  tenantId: '00000000-0000-4000-8000-000000000001',
  isvId: '00000000-0000-4000-8000-000000000002',
  grants: [{ connection_id: '00000000-0000-4000-8000-000000000003', keys: [Grant.TicketCreate, Grant.TicketUpdate] }],
  eventId: null, ticketRef: null, memberRef: null, findingId: null, chargeId: null, mapping: null, applicationId: null, webhookId: null,
  routingOverrides: {}, book: SANDBOX_BOOK, match: null, unmatchedCustomer: null, skippedCustomer: null,
};

const preview = { dry_run: true };
/** Well-formed ids that name nothing, for examples whose real call would change the sandbox. */
const NOTHING = '00000000-0000-4000-8000-00000000000a';
/** A receiver host that can never resolve: refused at once, so the example registers nothing. */
const YOUR_HOST = 'your-receiver.invalid';

export function operationExamples(ids: ExampleIds): Record<string, OperationExample> {
  const t = { tenant_id: ids.tenantId };
  return {
    ...tenantExamples(ids, t),
    ...recordReadExamples(ids, t),
    ...recordWriteExamples(ids, t),
    ...eventAndWebhookExamples(ids, t),
    ...identityExamples(ids, t),
    ...billingExamples(ids, t),
  };
}

type TenantPath = { tenant_id: string };

/** The tenants, their connections and grants, syncs, the sandbox, requests and keys. */
function tenantExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    list_tenants: {},
    me: {},
    list_connections: { path: t },
    tenant_status: { path: t },
    list_grants: { path: t, key: 'msp' },
    set_grants: { path: { ...t, isv_id: ids.isvId }, key: 'msp', body: { connections: ids.grants } },
    list_audit: { path: t, query: { limit: 5 } },
    sync_tenant: { path: t },
    tenant_sync: { path: { ...t, sync_id: '00000000-0000-4000-8000-0000000000aa' }, needs: 'a sync that answered 202 (POST /tenants/{tenant_id}/sync); its sync_id' },
    // Both exist to change the sandbox (a reset gives every record a new id and drops links, webhooks and
    // decisions): the examples name no tenant, so a click changes nothing.
    reset_sandbox: { body: { tenant_id: NOTHING }, needs: 'the id of the sandbox tenant to put back as seeded (GET /tenants): a reset is a real write, every record gets a new id' },
    simulate_sandbox_change: { body: { tenant_id: NOTHING, change: { kind: 'ticket_note', text: 'Customer called: the printer works again.' } }, needs: 'the id of a sandbox tenant (GET /tenants): the change is really made in its simulator and synced' },
    list_requests: { query: { status: '4xx', limit: 20 } },
    get_request: { path: { request_id: NOTHING }, needs: 'a request id: the request_id of an Error envelope, or the X-Request-Id header of any answer' },
    // Opening a session is a real write (there is no preview): the example names no tenant you see.
    create_connect_session: { body: { tenant_id: NOTHING, kinds: ['psa', 'rmm'], requested_grants: [Grant.TicketCreate, Grant.TicketEvents, Grant.DeviceEvents], redirect_url: `https://${YOUR_HOST}/connected` }, needs: 'msp_name for a new tenant, or the id of a tenant you see (GET /tenants), in place of tenant_id (opening a session is a real write)' },
    list_connect_sessions: {},
    get_connect_session: { path: { session_id: NOTHING }, needs: 'a session id from POST /connect-sessions' },
    cancel_connect_session: { path: { session_id: NOTHING }, needs: 'a session id from POST /connect-sessions (cancelling is a real write)' },
    create_console_link: { path: t, key: 'msp' },
    // Opens a repair page for the connection (an hour; nothing changes until an owner or admin presses Connect there).
    reconnect_connection: { path: { ...t, connection_id: ids.grants[0]!.connection_id }, key: 'msp' },
    rotate_msp_key: { path: t, body: { ...preview }, key: 'msp' },
  };
}

/** Lists and single-record reads of the vendor's records. */
function recordReadExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    list_tickets: { path: t, query: { limit: 5 } },
    list_devices: { path: t, query: { limit: 5 } },
    list_agreements: { path: t, query: { limit: 5 } },
    list_members: { path: t },
    list_boards: { path: t },
    list_statuses: { path: t },
    list_priorities: { path: t },
    list_applications: { path: t, query: { limit: 5 } },
    list_incidents: { path: t, query: { limit: 5 } },
    list_products: { path: t, query: { limit: 5 } },
    list_subscriptions: { path: t, query: { limit: 5 } },
    list_contacts: { path: t, query: { limit: 5 } },
    list_projects: { path: t, query: { limit: 5 } },
    list_packages: { path: t },
    // Single-record reads: by the vendor's id (source_id) from the fixtures, or our id from a list.
    get_ticket: { path: { ...t, record_id: '30101' } },
    get_device: { path: { ...t, record_id: '101' } },
    get_agreement: { path: { ...t, record_id: '101' } },
    get_member: { path: { ...t, record_id: '140' } },
    get_ticket_board: { path: { ...t, record_id: '1' } },
    get_ticket_status: { path: { ...t, record_id: '1' } },
    get_ticket_priority: { path: { ...t, record_id: '1' } },
    get_installed_application: ids.applicationId ? { path: { ...t, record_id: ids.applicationId } } : { path: { ...t, record_id: NOTHING }, needs: 'an id from GET /tenants/{tenant_id}/applications' },
    get_incident: { path: { ...t, record_id: '03c4b8b3-fd55-4ea9-9eb4-04d7ef21d40b' } },
    get_product: { path: { ...t, record_id: '1' } },
    get_subscription: { path: { ...t, record_id: '30a3cbf8-aa8e-5227-825e-0afd2b77eaf9' } },
    get_contact: { path: { ...t, record_id: '410' } },
    get_project: { path: { ...t, record_id: '11' } },
    get_package: { path: { ...t, record_id: '301' } },
  };
}

/** Writes to the vendor's records (previews where the operation has one), findings, routing and questions. */
function recordWriteExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    create_ticket: { path: t, body: { company_name: 'Contoso Ltd', summary: 'Outlook crashes on start for two users', description: 'Since the 2026-11 Office update.', priority: 'high', board: '1', ...preview } },
    create_contact: { path: t, status: 405, refuses: 'contacts are list and match only (interface document rule 10), so it always answers 405 `method_not_allowed`' },
    // The service never creates a project header (it writes on existing projects): the documented refusal.
    create_project: { path: t, body: { name: 'Security Baseline 2027', company_name: 'Contoso Ltd', description: 'MFA, BitLocker and patch cadence.', ...preview }, status: 422, refuses: 'the service never creates a project header (interface document rule 9), so it always answers 422 `project_header_not_supported`; add notes or items to an existing project instead' },
    write_agreement_lines: { path: { ...t, agreement_source_id: '101' }, body: { verb: 'rewrite', line_source_id: '804', quantity: 42, ...preview } },
    create_agreement: { path: t, body: { name: 'Managed Services - Platinum', company_name: 'Contoso Ltd', ...preview }, status: 422, refuses: 'the service never creates an agreement header (interface document rule 8), so it always answers 422 `agreement_header_not_supported`; write line items on an existing agreement instead' },
    // A ticket this service created (the link store), when the ISV has created one; else the refusal.
    write_ticket: ids.ticketRef
      ? { path: t, body: { ticket_ref: ids.ticketRef, action: 'note', note: { text: 'Rebooted the print spooler; monitoring.' }, ...preview } }
      : { path: t, body: { ticket_ref: '1001', action: 'note', note: { text: 'Rebooted the print spooler; monitoring.' }, ...preview }, needs: 'a ticket this service created (POST /tenants/{tenant_id}/tickets with dry_run false); its ticket_ref' },
    create_time_entry: ids.ticketRef
      ? { path: t, body: { ticket_ref: ids.ticketRef, hours: 0.5, billable: true, ...(ids.memberRef ? { member: ids.memberRef } : {}), ...preview } }
      : { path: t, body: { ticket_ref: '1001', hours: 0.5, billable: true, ...preview }, needs: 'a ticket this service created; its ticket_ref' },
    route_finding: { path: t, body: { kind: 'technical', title: 'BitLocker disabled on 3 laptops', severity: 'high', company_name: 'Contoso Ltd', idempotency_key: 'finding-example-1', ...preview } },
    resolve_finding: ids.findingId
      ? { path: { ...t, finding_id: ids.findingId }, body: { evidence: 'BitLocker enabled on all laptops.', ...preview } }
      : { path: { ...t, finding_id: 'finding-example-1' }, body: { evidence: 'BitLocker enabled on all laptops.', ...preview }, needs: 'a finding routed with dry_run false' },
    routing: { path: t },
    // The overrides as they stand: trying it changes nothing.
    set_routing: { path: t, body: { overrides: ids.routingOverrides } },
    create_company: { path: t, body: { name: 'Northwind Traders', phone: '+1 206 555 0142', website: 'https://northwindtraders.example', ...preview } },
    match_contacts: { path: t, body: { email: 'dana.reyes@contoso.com' } },
    add_project_note: { path: { ...t, project_source_id: '12' }, body: { text: 'Kick-off held; MFA rollout starts Monday.', ...preview } },
    add_project_item: { path: { ...t, project_source_id: '12' }, body: { summary: 'Enable BitLocker on laptops', ...preview } },
    deploy_to_device: { path: { ...t, device_id: '102' }, body: { package_name: 'Install 7-Zip', ...preview } },
    ask: { path: t, body: { question: 'Which devices are offline?' }, key: 'msp' },
    ask_examples: { path: t },
  };
}

/** The event feeds, and the tenant's and the ISV's webhooks. */
function eventAndWebhookExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    list_events: { path: t, query: ids.eventId ? { limit: 5, after: ids.eventId } : { limit: 5 } },
    list_isv_events: { query: { kind: 'connection', limit: 20 } },
    // Registering is a real write (there is no preview): the example names a host that can never resolve.
    register_webhook: { path: t, body: { url: `https://${YOUR_HOST}/hooks/msp-events` }, needs: 'an HTTPS receiver of your own: put its URL in place of this one (registering is a real write)' },
    list_webhooks: { path: t },
    // Deleting is a real write (there is no preview): the example names no webhook.
    delete_webhook: { path: { ...t, webhook_id: NOTHING }, needs: 'a webhook id from GET /tenants/{tenant_id}/ticket-events/webhook (deleting is a real write)' },
    list_webhook_deliveries: ids.webhookId
      ? { path: { ...t, webhook_id: ids.webhookId } }
      : { path: { ...t, webhook_id: NOTHING }, needs: 'a webhook id from POST /tenants/{tenant_id}/ticket-events/webhook' },
    get_webhook: { path: { ...t, webhook_id: NOTHING }, needs: 'a webhook id from GET /tenants/{tenant_id}/ticket-events/webhook' },
    update_webhook: { path: { ...t, webhook_id: NOTHING }, body: { enabled: false }, needs: 'a webhook id from GET /tenants/{tenant_id}/ticket-events/webhook (pausing is a real write)' },
    rotate_webhook_secret: { path: { ...t, webhook_id: NOTHING }, body: { overlap_seconds: 86400 }, needs: 'a webhook id from GET /tenants/{tenant_id}/ticket-events/webhook (rotating is a real write)' },
    test_webhook: { path: { ...t, webhook_id: NOTHING }, needs: 'a webhook id from GET /tenants/{tenant_id}/ticket-events/webhook' },
    retry_webhook_delivery: { path: { ...t, webhook_id: NOTHING, delivery_id: NOTHING }, needs: 'a delivery id from GET /tenants/{tenant_id}/ticket-events/webhook/{webhook_id}/deliveries' },
    register_isv_webhook: { body: { url: `https://${YOUR_HOST}/hooks/all-tenants`, kinds: ['ticket', 'connection'] }, needs: 'an HTTPS receiver of your own: put its URL in place of this one (registering is a real write)' },
    list_isv_webhooks: {},
    get_isv_webhook: { path: { webhook_id: NOTHING }, needs: 'a webhook id from GET /webhooks' },
    update_isv_webhook: { path: { webhook_id: NOTHING }, body: { enabled: false }, needs: 'a webhook id from GET /webhooks (pausing is a real write)' },
    delete_isv_webhook: { path: { webhook_id: NOTHING }, needs: 'a webhook id from GET /webhooks (deleting is a real write)' },
    rotate_isv_webhook_secret: { path: { webhook_id: NOTHING }, body: { overlap_seconds: 86400 }, needs: 'a webhook id from GET /webhooks (rotating is a real write)' },
    test_isv_webhook: { path: { webhook_id: NOTHING }, needs: 'a webhook id from GET /webhooks' },
    list_isv_webhook_deliveries: { path: { webhook_id: NOTHING }, needs: 'a webhook id from GET /webhooks' },
    retry_isv_webhook_delivery: { path: { webhook_id: NOTHING, delivery_id: NOTHING }, needs: 'a delivery id from GET /webhooks/{webhook_id}/deliveries' },
  };
}

/** The ISV's customer book and its matches to the vendor's companies. */
function identityExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    // The book as it stands: trying it changes nothing.
    put_identity_book: { path: t, body: { customers: ids.book } },
    identity_book: { path: t },
    delete_identity_customer: { path: { ...t, ref: 'your-customer-ref' }, needs: 'the ref of a customer of your book (GET /tenants/{tenant_id}/identity/book; deleting is a real write)' },
    identity_mappings: { path: t },
    identity_unmapped: { path: t },
    identity_candidates: { path: t, query: { customer_ref: 'cust-004', limit: 5 } },
    // A match that exists: the answer is the match, unchanged.
    identity_match: ids.match
      ? { path: t, body: ids.match }
      : { path: t, body: { customer_ref: 'cust-002', company_source_id: '19292' }, needs: 'a customer and a company from GET /tenants/{tenant_id}/identity/unmapped' },
    identity_skip: ids.skippedCustomer
      ? { path: t, body: { customer_ref: ids.skippedCustomer } }
      : { path: t, body: { customer_ref: 'your-customer-ref' }, needs: 'the ref of a customer that needs a match (GET /tenants/{tenant_id}/identity/unmapped; skipping is a real write, undone by identity/unset)' },
    // A customer that needs a match already: nothing to unset.
    identity_unset: { path: t, body: { customer_ref: ids.unmatchedCustomer ?? 'cust-005' } },
    put_import_endpoint: { path: t, body: { url: `https://${YOUR_HOST}/msp-import` }, needs: 'an HTTPS endpoint of your own: put its URL in place of this one (registering is a real write)' },
    identity_import: { path: t, body: { all_unmatched: true, ...preview }, needs: 'an import endpoint (PUT /tenants/{tenant_id}/identity/import-endpoint)' },
  };
}

/** Costs, minimums, agreement line mappings, charges and the reconciliation. */
function billingExamples(ids: ExampleIds, t: TenantPath): Record<string, OperationExample> {
  return {
    submit_isv_cost: { path: t, body: { external_customer_ref: 'cust-001', product_source_id: 'edr-endpoint', period_start: '2026-11-01', period_end: '2026-11-30', actual_quantity: 49, billable_quantity: 48, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 148.8, ...preview } },
    list_isv_costs: { path: t, query: { period_start: '2026-11-01', period_end: '2026-11-30' } },
    submit_partner_minimum: { path: t, body: { product_source_id: 'edr-endpoint', period_start: '2026-11-01', period_end: '2026-11-30', currency: 'USD', minimum_amount: 700, ...preview } },
    list_partner_minimums: { path: t },
    // A pairing that exists: 200 `already_existed`, nothing changes.
    create_agreement_line_mapping: { path: t, body: { vendor_key: ids.isvId, vendor_product_ref: ids.mapping?.product ?? 'edr-endpoint', status: 'mapped', agreement_id: ids.mapping?.agreement ?? '101', agreement_line_ref: ids.mapping?.line ?? '803' } },
    list_agreement_line_mappings: { path: t },
    delete_agreement_line_mapping: ids.mapping
      ? { path: { ...t, mapping_id: ids.mapping.id }, query: { dry_run: 'true' } }
      : { path: { ...t, mapping_id: NOTHING }, query: { dry_run: 'true' }, needs: 'a mapping id from GET /tenants/{tenant_id}/agreement-line-mappings' },
    suggest_agreement_line_mapping: { path: t, body: { vendor_key: ids.isvId, vendor_product_ref: 'edr-endpoint', product_name: 'SentinelOne Control EDR', product_sku: 'EDR-S1' } },
    list_charges: { path: t, query: { status: 'pending' }, key: 'msp' },
    approve_charge: ids.chargeId
      ? { path: { ...t, charge_id: ids.chargeId }, body: { ...preview }, key: 'msp' }
      : { path: { ...t, charge_id: NOTHING }, body: { ...preview }, key: 'msp', needs: 'a pending charge id from GET /tenants/{tenant_id}/charges' },
    dismiss_charge: ids.chargeId
      ? { path: { ...t, charge_id: ids.chargeId }, body: { ...preview }, key: 'msp' }
      : { path: { ...t, charge_id: NOTHING }, body: { ...preview }, key: 'msp', needs: 'a pending charge id from GET /tenants/{tenant_id}/charges' },
    restore_charge: ids.chargeId
      ? { path: { ...t, charge_id: ids.chargeId }, body: { ...preview }, key: 'msp' }
      : { path: { ...t, charge_id: NOTHING }, body: { ...preview }, key: 'msp', needs: 'a dismissed charge id from GET /tenants/{tenant_id}/charges?status=dismissed' },
    billing_reconciliation: { path: t, query: { period_start: '2026-11-01', period_end: '2026-11-30' }, key: 'msp' },
  };
}
