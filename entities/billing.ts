/**
 * Billing (docs/architecture.md, Agreements and billing): what an ISV reports it delivered (cost rows) and its partner
 * minimums, the pairing of an ISV product with an agreement line, and the charges computed from them.
 * Periods are `YYYY-MM-DD` text: they are calendar days, never instants, and compare as text.
 */
import { Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

@Entity('isv_costs')
@Unique('uq_isv_costs_row', ['tenantId', 'isvId', 'externalCustomerRef', 'productSourceId', 'periodStart', 'periodEnd'])
@Index('ix_isv_costs_period', ['tenantId', 'periodStart', 'periodEnd'])
// Partial and expression indexes live in the migration only (TypeORM cannot declare them): not synchronised.
@Index('uq_isv_costs_key', { synchronize: false })
export class IsvCostRow extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  /** The key of the submission that last wrote the row; a replay with it replaces this row. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true }) idempotencyKey!: string | null;
  @Column({ name: 'external_customer_ref', type: 'text' }) externalCustomerRef!: string;
  @Column({ name: 'external_customer_name', type: 'text', nullable: true }) externalCustomerName!: string | null;
  @Column({ name: 'product_source_id', type: 'text' }) productSourceId!: string;
  @Column({ name: 'product_name', type: 'text', nullable: true }) productName!: string | null;
  @Column({ name: 'period_start', type: 'text' }) periodStart!: string;
  @Column({ name: 'period_end', type: 'text' }) periodEnd!: string;
  @Column({ name: 'actual_quantity', type: 'double precision' }) actualQuantity!: number;
  @Column({ name: 'billable_quantity', type: 'double precision' }) billableQuantity!: number;
  @Column({ type: 'text' }) currency!: string;
  @Column({ name: 'msp_cost_unit', type: 'double precision' }) mspCostUnit!: number;
  @Column({ name: 'msp_cost_extended', type: 'double precision' }) mspCostExtended!: number;
  /** customer_price_*, suggested_retail_* as submitted. */
  @Column({ type: 'jsonb', default: {} }) prices!: Record<string, number | null>;
  @Column({ type: 'integer', default: 1 }) revision!: number;
}

@Entity('partner_minimums')
@Unique('uq_partner_minimums_row', ['tenantId', 'isvId', 'productSourceId', 'periodStart', 'periodEnd'])
@Index('uq_partner_minimums_key', { synchronize: false })
export class PartnerMinimumRow extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ name: 'idempotency_key', type: 'text', nullable: true }) idempotencyKey!: string | null;
  @Column({ name: 'product_source_id', type: 'text' }) productSourceId!: string;
  @Column({ name: 'product_name', type: 'text', nullable: true }) productName!: string | null;
  @Column({ name: 'period_start', type: 'text' }) periodStart!: string;
  @Column({ name: 'period_end', type: 'text' }) periodEnd!: string;
  @Column({ type: 'text' }) currency!: string;
  @Column({ name: 'minimum_amount', type: 'double precision' }) minimumAmount!: number;
  @Column({ type: 'integer', default: 1 }) revision!: number;
}

export type LineMappingStatus = 'mapped' | 'unmapped';

/** An ISV product paired with one agreement line (`mapped`), or set aside as not billed through an agreement (`unmapped`). */
@Entity('agreement_line_mappings')
@Index('ix_line_mappings_product', ['tenantId', 'isvId', 'vendorProductRef'])
@Index('ix_line_mappings_agreement', ['tenantId', 'connectionId', 'agreementSourceId'])
@Index('uq_line_mappings_pair', { synchronize: false })
export class AgreementLineMapping extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ name: 'vendor_product_ref', type: 'text' }) vendorProductRef!: string;
  @Column({ type: 'text' }) status!: LineMappingStatus;
  @Column({ name: 'connection_id', type: 'uuid', nullable: true }) connectionId!: string | null;
  @Column({ name: 'agreement_source_id', type: 'text', nullable: true }) agreementSourceId!: string | null;
  @Column({ name: 'line_source_id', type: 'text', nullable: true }) lineSourceId!: string | null;
  @Column({ name: 'decided_by', type: 'text' }) decidedBy!: string;
}

export type ChargeStatus = 'pending' | 'approving' | 'approved' | 'dismissed';

@Entity('charges')
@Index('ix_charges_status', ['tenantId', 'status'])
@Index('uq_charges_open_line', { synchronize: false })
export class ChargeRecord extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'connection_id', type: 'uuid' }) connectionId!: string;
  @Column({ name: 'agreement_source_id', type: 'text' }) agreementSourceId!: string;
  @Column({ name: 'line_source_id', type: 'text' }) lineSourceId!: string;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ name: 'company_name', type: 'text', nullable: true }) companyName!: string | null;
  @Column({ name: 'product_source_id', type: 'text', nullable: true }) productSourceId!: string | null;
  @Column({ name: 'product_name', type: 'text', nullable: true }) productName!: string | null;
  @Column({ name: 'current_quantity', type: 'double precision', nullable: true }) currentQuantity!: number | null;
  @Column({ name: 'proposed_quantity', type: 'double precision' }) proposedQuantity!: number;
  @Column({ name: 'unit_price', type: 'double precision', nullable: true }) unitPrice!: number | null;
  @Column({ name: 'period_start', type: 'text' }) periodStart!: string;
  @Column({ name: 'period_end', type: 'text' }) periodEnd!: string;
  @Column({ name: 'cost_rows', type: 'jsonb', default: [] }) costRows!: string[];
  @Column({ type: 'text' }) status!: ChargeStatus;
  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true }) decidedAt!: Date | null;
}

/**
 * Where a cost row lands, as the last charge recomputation resolved it (src/billing/cost-resolution.ts).
 * Current only while its tenant's billing_versions row says so; written by the recomputation alone.
 */
@Entity('cost_resolutions')
@Index('ix_cost_resolutions_tenant', ['tenantId'])
export class CostResolution {
  @PrimaryColumn({ name: 'cost_id', type: 'uuid' }) costId!: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'connection_id', type: 'uuid', nullable: true }) connectionId!: string | null;
  @Column({ name: 'company_source_id', type: 'text', nullable: true }) companySourceId!: string | null;
  @Column({ name: 'agreement_source_id', type: 'text', nullable: true }) agreementSourceId!: string | null;
  @Column({ name: 'line_source_id', type: 'text', nullable: true }) lineSourceId!: string | null;
  @Column({ name: 'line_product_source_id', type: 'text', nullable: true }) lineProductSourceId!: string | null;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
  @Column({ name: 'explicitly_unmapped', type: 'boolean', default: false }) explicitlyUnmapped!: boolean;
}

/**
 * Per tenant: how many changes the cost resolution's inputs have had (counted by triggers on the five
 * tables it reads; migration 1764400000000) and the count the stored resolution was made at.
 */
@Entity('billing_versions')
export class BillingVersion {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ type: 'bigint', default: 0 }) changed!: string;
  @Column({ type: 'bigint', default: -1 }) resolved!: string;
}
