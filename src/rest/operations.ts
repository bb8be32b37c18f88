/** The graph operations REST and MCP run (parsed and validated once at start). */
const VENDOR = 'raw synced_at vendor { connector native_id native }';
const PAGE = 'sandbox last_synced_at next_cursor served_from';
const LIST_VARS = '$tenant_id: ID!, $limit: Int!, $cursor: String, $updated_since: String';
const LIST_ARGS = 'tenant_id: $tenant_id, limit: $limit, cursor: $cursor, updated_since: $updated_since';

export const RECORD_FIELDS = {
  tickets: `id source source_id connection_id summary description status native_status priority native_priority board board_name company_name company_source_id project_source_id record_type linked created_at updated_at closed_at ${VENDOR}`,
  devices: `id source source_id hostname company_name company_source_id os online needs_attention patches_pending last_contact_at ${VENDOR}`,
  members: `id display_name active email source source_id connection_id ${VENDOR}`,
  boards: `id name active source connection_id ${VENDOR}`,
  statuses: `id name board closed canonical source connection_id ${VENDOR}`,
  priorities: `id name canonical source connection_id ${VENDOR}`,
  applications: `id source source_id name publisher version device_source_id installed_at ${VENDOR}`,
  incidents: `id source source_id message severity device_source_id opened_at ${VENDOR}`,
  agreements: `source source_id name status billing_cycle company_name company_source_id start_date end_date monthly_recurring_revenue lines { source source_id agreement_source_id product_name product_source_id quantity unit_cost unit_price effective_start effective_end ${VENDOR} } ${VENDOR}`,
} as const;

/** graph query field -> items field of its envelope */
export const LIST_OPERATIONS = {
  tickets: { field: 'tickets', items: 'tickets' },
  devices: { field: 'devices', items: 'devices' },
  members: { field: 'members', items: 'members' },
  boards: { field: 'ticket_boards', items: 'boards' },
  statuses: { field: 'ticket_statuses', items: 'statuses' },
  priorities: { field: 'ticket_priorities', items: 'priorities' },
  applications: { field: 'applications', items: 'applications' },
  incidents: { field: 'incidents', items: 'incidents' },
  agreements: { field: 'agreements', items: 'agreements' },
} as const;

export type ListOperation = keyof typeof LIST_OPERATIONS;

/** The REST read path: the page as the JSON text of its envelope (see RecordsService.listJson). */
export const LIST_JSON = `query ListJson($list: String!, ${LIST_VARS}) { json: list_page_json(list: $list, ${LIST_ARGS}) }`;

export function listDocument(op: ListOperation): string {
  const { field, items } = LIST_OPERATIONS[op];
  return `query List(${LIST_VARS}) { page: ${field}(${LIST_ARGS}) { ${items} { ${RECORD_FIELDS[op]} } ${PAGE} } }`;
}

const CONNECTION_FIELDS = 'id kind connector base_url limited grants last_synced_at sync_status resources { resource last_status last_synced_at last_attempt_at last_mode last_error records }';
const SYNC_REPORT = 'connection_id connector ok error resources { resource mode fetched created updated unchanged }';

export const TENANTS = 'query { tenants { tenants { id name slug sandbox connections { id kind connector } } } }';
export const CONNECTIONS = `query C($tenant_id: ID!) { connections(tenant_id: $tenant_id) { connections { ${CONNECTION_FIELDS} } sandbox } }`;
export const STATUS = `query S($tenant_id: ID!) { tenant_status(tenant_id: $tenant_id) { tenant_id name sandbox healthy last_synced_at connections { ${CONNECTION_FIELDS} } } }`;
export const AUDIT = 'query A($tenant_id: ID!, $limit: Int!, $cursor: String) { audit(tenant_id: $tenant_id, limit: $limit, cursor: $cursor) { entries { id action outcome connection_id subject_ref detail created_at } sandbox next_cursor } }';
export const SYNC = `mutation Sync($tenant_id: ID!, $full: Boolean!) { sync_tenant(tenant_id: $tenant_id, full: $full) { tenant_id sandbox ok connections { ${SYNC_REPORT} } } }`;
export const RESET = `mutation Reset($tenant_id: ID!) { reset_sandbox(tenant_id: $tenant_id) { tenant_id sandbox connections { ${SYNC_REPORT} } } }`;

export const ALL_DOCUMENTS: string[] = [
  ...(Object.keys(LIST_OPERATIONS) as ListOperation[]).map(listDocument),
  LIST_JSON, TENANTS, CONNECTIONS, STATUS, AUDIT, SYNC, RESET,
];
