/**
 * Agreements (interface document rule 8, docs/architecture.md, Agreements and billing): the store-served list lives with the
 * other lists (src/records); here the line writes on an existing agreement and the header create the
 * service refuses.
 */
import type { ErrorCode } from '../errors/error-codes';
import { Grant } from '../access/caller';
import type { FeatureModule } from '../operations/feature-module';
import { headerRefusal } from '../operations/header-refusal';
import { operationsUsing, tenantOf } from '../operations/operation';
import { agreementWriteStatus, type AgreementLinesService } from './agreement-lines.service';
import * as S from './agreement.schemas';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface AgreementsServices {
  agreementLines: AgreementLinesService;
}
const defineOperation = operationsUsing<AgreementsServices>();

const WRITE_ERRORS: ErrorCode[] = ['grant_missing', 'validation', 'idempotency_conflict', 'idempotency_in_progress', 'not_supported',
  'rate_limited', 'vendor_error', 'vendor_unavailable', 'role_required', 'agreement_requires_existing'];

const createAgreement = headerRefusal({
  name: 'create_agreement', noun: 'agreement', rule: 8, path: '/tenants/{tenant_id}/agreements', body: S.CreateAgreementBody,
  code: 'agreement_header_not_supported', instead: 'write lines on an existing, active agreement instead',
});

const writeAgreementLines = defineOperation({
  name: 'write_agreement_lines', kind: 'mutation', summary: 'Add, rewrite, end or replace a line of an existing agreement (preview or commit)', tag: 'Writes',
  role: 'isv', grant: Grant.AgreementWrite,
  unknownPathId: 'agreement_requires_existing',
  description: 'One line write on an existing, active agreement: `add`, `rewrite`, `end`, or `replace` (end then add under one key; a half-done replace answers 207 with `partial_failure` and a retry with the same key finishes it). Unknown or inactive agreement 404 `agreement_requires_existing`; unknown line or product, a line of another agreement or a bad number 422 `validation`. The limited PSA connector previews everywhere and commits only on its fixture host (else 501 `not_supported`).',
  http: { method: 'post', path: '/tenants/{tenant_id}/agreements/{agreement_source_id}/lines', documented: true },
  path: S.AgreementPath, body: S.AgreementLinesBody,
  responses: [
    { status: 200, schema: S.AgreementLinesPreview, description: 'Preview (dry_run true, the default): the exact vendor requests; nothing was written.' },
    { status: 201, schema: S.AgreementLinesResult, description: 'Committed: a line was added (add, replace), or an idempotent replay of that answer.' },
    { status: 200, schema: S.AgreementLinesResult, description: 'Committed: a line was changed or ended.' },
    { status: 207, schema: S.AgreementLinesResult, description: 'A replace whose end landed and whose add did not: `partial_failure`, `failed_step`; retry with the same idempotency_key.' },
  ],
  statusOf: agreementWriteStatus,
  errors: WRITE_ERRORS,
  handle: async ({ path, body }, ctx) => ctx.services.agreementLines.write(ctx.caller, tenantOf(ctx), path.agreement_source_id, body),
});

export const agreementsFeature: FeatureModule<AgreementsServices> = { name: 'agreements', operations: [createAgreement, writeAgreementLines] };
