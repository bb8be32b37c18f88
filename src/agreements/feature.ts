/**
 * Agreements (interface document rule 8, design.md section 12): the store-served list lives with the
 * other lists (src/records); here the line writes on an existing agreement and the header create the
 * service refuses.
 */
import type { ErrorCode } from '../errors/error-codes';
import type { FeatureModule } from '../feature';
import { defineOperation } from '../operations/operation';
import { tenantOf } from '../operations/runner';
import { ErrorBody } from '../rest/schemas';
import { TenantPath } from '../shared/request';
import { agreementWriteStatus } from './agreement-lines.service';
import * as S from './agreement.schemas';

const WRITE_ERRORS: ErrorCode[] = ['grant_missing', 'validation', 'idempotency_conflict', 'idempotency_in_progress', 'not_supported',
  'rate_limited', 'vendor_error', 'vendor_unavailable', 'role_required', 'agreement_requires_existing'];

const createAgreement = defineOperation({
  name: 'create_agreement', kind: 'mutation', summary: 'Create an agreement header (always refused)', tag: 'Writes', role: 'isv',
  // Only a refusal to answer: the graph has no field for it (the REST path is in the interface document).
  graph: false,
  description: 'The service never creates an agreement header (interface document rule 8): every request answers 422 `agreement_header_not_supported`. Write lines on an existing, active agreement instead.',
  http: { method: 'post', path: '/tenants/{tenant_id}/agreements', documented: true },
  path: TenantPath, body: S.CreateAgreementBody,
  responses: [{ status: 422, schema: ErrorBody, description: '`agreement_header_not_supported`: the service never creates an agreement header.' }],
  errors: ['agreement_header_not_supported', 'role_required'],
  handle: async (_in, ctx) => ctx.services.agreementLines.refuseHeader(),
});

const writeAgreementLines = defineOperation({
  name: 'write_agreement_lines', kind: 'mutation', summary: 'Add, rewrite, end or replace a line of an existing agreement (preview or commit)', tag: 'Writes',
  role: 'isv', grant: 'psa.agreement.write',
  unknownPathId: 'agreement_requires_existing',
  description: 'One line write on an existing, active agreement (design.md section 12): `add`, `rewrite`, `end`, or `replace` (end then add under one key; a half-done replace answers 207 with `partial_failure` and a retry with the same key finishes it). Unknown or inactive agreement 404 `agreement_requires_existing`; unknown line or product, a line of another agreement or a bad number 422 `validation`. The limited PSA connector previews everywhere and commits only on its fixture host (else 501 `not_supported`).',
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

export const agreementsFeature: FeatureModule = { name: 'agreements', operations: [createAgreement, writeAgreementLines] };
