import { Column, Entity, Index, Unique } from 'typeorm';
import { SyncedRecord } from './base';

/**
 * Synced records. Column names are snake_case; TypeScript properties are camelCase.
 * Connectors fill the typed fields (see src/connectors/types.ts, `RecordFields`), the sync engine
 * fills tenant, connection, source_id, raw, raw_hash, synced_at.
 */

@Entity('tickets')
@Unique('uq_tickets_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_tickets_tenant_id', ['tenantId', 'id'])
export class TicketRecord extends SyncedRecord {
  @Column({ type: 'text' }) summary!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  /** Canonical status (new, in_progress, waiting, resolved, closed) or null when unmapped. */
  @Column({ type: 'text', nullable: true }) status!: string | null;
  @Column({ name: 'native_status', type: 'text', nullable: true }) nativeStatus!: string | null;
  @Column({ name: 'status_source_id', type: 'text', nullable: true }) statusSourceId!: string | null;
  /** Canonical priority (low, medium, high, critical) or null when unknown. */
  @Column({ type: 'text', nullable: true }) priority!: string | null;
  @Column({ name: 'native_priority', type: 'text', nullable: true }) nativePriority!: string | null;
  @Column({ name: 'priority_source_id', type: 'text', nullable: true }) prioritySourceId!: string | null;
  @Column({ name: 'board_source_id', type: 'text', nullable: true }) boardSourceId!: string | null;
  @Column({ name: 'board_name', type: 'text', nullable: true }) boardName!: string | null;
  @Column({ name: 'company_name', type: 'text', nullable: true }) companyName!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ name: 'project_source_id', type: 'text', nullable: true }) projectSourceId!: string | null;
  /** ServiceTicket, ProjectTicket, ... as the vendor says. */
  @Column({ name: 'record_type', type: 'text', nullable: true }) recordType!: string | null;
  @Column({ type: 'boolean', default: false }) closed!: boolean;
  @Column({ name: 'note_count', type: 'integer', default: 0 }) noteCount!: number;
  @Column({ name: 'opened_at', type: 'timestamptz', nullable: true }) openedAt!: Date | null;
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true }) closedAt!: Date | null;
}

@Entity('companies')
@Unique('uq_companies_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_companies_tenant_id', ['tenantId', 'id'])
@Index('ix_companies_name', ['tenantId', 'connectionId', 'name'])
export class CompanyRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', nullable: true }) identifier!: string | null;
}

@Entity('contacts')
@Unique('uq_contacts_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_contacts_tenant_id', ['tenantId', 'id'])
export class ContactRecord extends SyncedRecord {
  @Column({ name: 'first_name', type: 'text', nullable: true }) firstName!: string | null;
  @Column({ name: 'last_name', type: 'text', nullable: true }) lastName!: string | null;
  @Column({ type: 'text', nullable: true }) email!: string | null;
  @Column({ type: 'text', nullable: true }) phone!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
}

@Entity('members')
@Unique('uq_members_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_members_tenant_id', ['tenantId', 'id'])
export class MemberRecord extends SyncedRecord {
  /** The value CreateTimeEntryBody.member accepts (the vendor's member identifier or resource id). */
  @Column({ name: 'member_ref', type: 'text' }) memberRef!: string;
  @Column({ name: 'display_name', type: 'text' }) displayName!: string;
  @Column({ type: 'boolean', nullable: true }) active!: boolean | null;
  @Column({ type: 'text', nullable: true }) email!: string | null;
}

@Entity('ticket_boards')
@Unique('uq_ticket_boards_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_ticket_boards_tenant_id', ['tenantId', 'id'])
export class BoardRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'boolean', nullable: true }) active!: boolean | null;
}

@Entity('ticket_statuses')
@Unique('uq_ticket_statuses_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_ticket_statuses_tenant_id', ['tenantId', 'id'])
export class StatusRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ name: 'board_source_id', type: 'text', nullable: true }) boardSourceId!: string | null;
  @Column({ type: 'boolean', default: false }) closed!: boolean;
  /** Canonical status this vendor status maps to, from the connection's mapping; null when unmapped. */
  @Column({ type: 'text', nullable: true }) canonical!: string | null;
  @Column({ name: 'sort_order', type: 'integer', nullable: true }) sortOrder!: number | null;
}

@Entity('ticket_priorities')
@Unique('uq_ticket_priorities_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_ticket_priorities_tenant_id', ['tenantId', 'id'])
export class PriorityRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', nullable: true }) canonical!: string | null;
  @Column({ name: 'sort_order', type: 'integer', nullable: true }) sortOrder!: number | null;
}

@Entity('devices')
@Unique('uq_devices_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_devices_tenant_id', ['tenantId', 'id'])
export class DeviceRecord extends SyncedRecord {
  @Column({ type: 'text' }) hostname!: string;
  @Column({ name: 'company_name', type: 'text', nullable: true }) companyName!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ type: 'text', nullable: true }) os!: string | null;
  @Column({ type: 'boolean', default: true }) online!: boolean;
  @Column({ name: 'needs_attention', type: 'boolean', default: false }) needsAttention!: boolean;
  @Column({ name: 'patches_pending', type: 'integer', default: 0 }) patchesPending!: number;
  @Column({ name: 'last_contact_at', type: 'timestamptz', nullable: true }) lastContactAt!: Date | null;
}

@Entity('installed_applications')
@Unique('uq_installed_applications_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_installed_applications_tenant_id', ['tenantId', 'id'])
export class InstalledApplicationRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', nullable: true }) publisher!: string | null;
  @Column({ type: 'text', nullable: true }) version!: string | null;
  @Column({ name: 'device_source_id', type: 'text' }) deviceSourceId!: string;
  @Column({ name: 'installed_at', type: 'text', nullable: true }) installedAt!: string | null;
}

@Entity('incidents')
@Unique('uq_incidents_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_incidents_tenant_id', ['tenantId', 'id'])
export class IncidentRecord extends SyncedRecord {
  @Column({ type: 'text' }) message!: string;
  @Column({ type: 'text', nullable: true }) severity!: string | null;
  @Column({ name: 'device_source_id', type: 'text', nullable: true }) deviceSourceId!: string | null;
  @Column({ name: 'opened_at', type: 'timestamptz', nullable: true }) openedAt!: Date | null;
}

/**
 * The RMM's catalogue of installable packages (the install scripts a device deploy runs), with the
 * operating systems each runs on, as canonical families (windows, mac, linux).
 */
@Entity('packages')
@Unique('uq_packages_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_packages_tenant_id', ['tenantId', 'id'])
export class PackageRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ name: 'operating_systems', type: 'jsonb' }) operatingSystems!: string[];
  @Column({ type: 'boolean', default: true }) active!: boolean;
}

@Entity('agreements')
@Unique('uq_agreements_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_agreements_tenant_id', ['tenantId', 'id'])
@Index('ix_agreements_company', ['tenantId', 'connectionId', 'companySourceId'])
export class AgreementRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', default: 'unknown' }) status!: string;
  @Column({ name: 'billing_cycle', type: 'text', default: 'unknown' }) billingCycle!: string;
  @Column({ name: 'company_name', type: 'text', nullable: true }) companyName!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ name: 'start_date', type: 'text', nullable: true }) startDate!: string | null;
  @Column({ name: 'end_date', type: 'text', nullable: true }) endDate!: string | null;
  @Column({ name: 'monthly_recurring_revenue', type: 'double precision', nullable: true }) monthlyRecurringRevenue!: number | null;
}

@Entity('agreement_lines')
@Unique('uq_agreement_lines_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_agreement_lines_agreement', ['tenantId', 'connectionId', 'agreementSourceId'])
export class AgreementLineRecord extends SyncedRecord {
  @Column({ name: 'agreement_source_id', type: 'text' }) agreementSourceId!: string;
  @Column({ name: 'product_name', type: 'text', nullable: true }) productName!: string | null;
  @Column({ name: 'product_source_id', type: 'text', nullable: true }) productSourceId!: string | null;
  @Column({ type: 'double precision', nullable: true }) quantity!: number | null;
  @Column({ name: 'unit_cost', type: 'double precision', nullable: true }) unitCost!: number | null;
  @Column({ name: 'unit_price', type: 'double precision', nullable: true }) unitPrice!: number | null;
  @Column({ name: 'effective_start', type: 'text', nullable: true }) effectiveStart!: string | null;
  @Column({ name: 'effective_end', type: 'text', nullable: true }) effectiveEnd!: string | null;
}

@Entity('projects')
@Unique('uq_projects_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_projects_tenant_id', ['tenantId', 'id'])
export class ProjectRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', nullable: true }) status!: string | null;
  @Column({ name: 'company_name', type: 'text', nullable: true }) companyName!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  /** A baseline project cannot take writes (interface document rule 9). */
  @Column({ type: 'boolean', default: false }) baseline!: boolean;
}

/**
 * The PSA catalogue and the distributor's catalogue (each connector says where it reads them): what an
 * agreement line's `product_source_id` points at.
 */
@Entity('products')
@Unique('uq_products_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_products_tenant_id', ['tenantId', 'id'])
export class ProductRecord extends SyncedRecord {
  @Column({ type: 'text' }) name!: string;
  /** The vendor's product code (identifier, SKU or item code); null when none. */
  @Column({ type: 'text', nullable: true }) sku!: string | null;
  @Column({ name: 'unit_price', type: 'double precision', nullable: true }) unitPrice!: number | null;
  @Column({ name: 'unit_cost', type: 'double precision', nullable: true }) unitCost!: number | null;
  /** False when the vendor marks the product inactive; null when the vendor does not say. */
  @Column({ type: 'boolean', nullable: true }) active!: boolean | null;
}

/** Distributor subscriptions: a company's quantity of a product. */
@Entity('subscriptions')
@Unique('uq_subscriptions_source', ['tenantId', 'connectionId', 'sourceId'])
@Index('ix_subscriptions_tenant_id', ['tenantId', 'id'])
export class SubscriptionRecord extends SyncedRecord {
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ name: 'product_source_id', type: 'text', nullable: true }) productSourceId!: string | null;
  @Column({ name: 'product_name', type: 'text', nullable: true }) productName!: string | null;
  @Column({ type: 'double precision', nullable: true }) quantity!: number | null;
  @Column({ type: 'double precision', nullable: true }) price!: number | null;
  @Column({ name: 'partner_cost', type: 'double precision', nullable: true }) partnerCost!: number | null;
  @Column({ name: 'billing_term', type: 'text', nullable: true }) billingTerm!: string | null;
  @Column({ type: 'text', nullable: true }) status!: string | null;
  @Column({ name: 'start_date', type: 'text', nullable: true }) startDate!: string | null;
  @Column({ name: 'end_date', type: 'text', nullable: true }) endDate!: string | null;
}
