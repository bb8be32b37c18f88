/**
 * Identity (docs/architecture.md, Companies, contacts and identity): an ISV's own customer list (its book) per tenant, the decisions
 * that pair a book customer with a PSA company (Match) or set a row aside (Skip), and the ISV's import
 * endpoint. Every decision records who made it (auto, the ISV's key or the MSP's key) and when.
 */
import { Column, Entity, Index, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

@Entity('isv_customers')
@Unique('uq_isv_customers_ref', ['tenantId', 'isvId', 'ref'])
@Index('ix_isv_customers_name', ['tenantId', 'isvId', 'normalizedName'])
export class IsvCustomer extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  /** The ISV's own id of the customer. */
  @Column({ type: 'text' }) ref!: string;
  @Column({ type: 'text' }) name!: string;
  /** normalizeName(name) (src/identity/normalize.ts), kept so that lookups by name are one indexed query. */
  @Column({ name: 'normalized_name', type: 'text' }) normalizedName!: string;
  @Column({ type: 'text', nullable: true }) domain!: string | null;
}

export type DecidedBy = 'auto' | 'isv' | 'msp';

@Entity('identity_matches')
@Unique('uq_identity_match_customer', ['tenantId', 'isvId', 'customerRef'])
@Unique('uq_identity_match_company', ['tenantId', 'isvId', 'connectionId', 'companySourceId'])
export class IdentityMatch extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ name: 'customer_ref', type: 'text' }) customerRef!: string;
  @Column({ name: 'connection_id', type: 'uuid' }) connectionId!: string;
  @Column({ name: 'company_source_id', type: 'text' }) companySourceId!: string;
  /** auto_exact_name, manual, import, company_create */
  @Column({ type: 'text' }) how!: string;
  @Column({ name: 'decided_by', type: 'text' }) decidedBy!: DecidedBy;
}

@Entity('identity_skips')
@Unique('uq_identity_skip', ['tenantId', 'isvId', 'side', 'subject'])
export class IdentitySkip extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  /** psa_company (subject: `<connection id>:<company source id>`) or isv_customer (subject: the ref). */
  @Column({ type: 'text' }) side!: 'psa_company' | 'isv_customer';
  @Column({ type: 'text' }) subject!: string;
  @Column({ name: 'decided_by', type: 'text' }) decidedBy!: DecidedBy;
}

@Entity('identity_import_endpoints')
@Unique('uq_identity_import_endpoint', ['tenantId', 'isvId'])
@Index('ix_identity_import_endpoints_tenant', ['tenantId'])
export class ImportEndpoint extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ type: 'text' }) url!: string;
  /** The signing secret, sealed with the service key (it must be recoverable to sign). */
  @Column({ name: 'secret_encrypted', type: 'text' }) secretEncrypted!: string;
}
