/**
 * Agreement line writes (interface document rule 8, docs/architecture.md, Agreements and billing): one body for the four verbs
 * on an existing, active agreement, and the header create the service refuses. Which fields a verb
 * needs is checked here (422 HTTPValidationError); numbers, dates and references are the service's and
 * the vendor's rules (422 `validation`).
 */
import { commitResult, keyedWrite, previewResult, TargetError } from '../operations/write-results';
import { dayField } from '../shared/dates';
import { pathId, TenantPath, text, z } from '../shared/request';

export const AgreementPath = TenantPath.extend({
  agreement_source_id: pathId('agreement_source_id', 'The agreement\'s id in the PSA (`source_id` from GET /tenants/{tenant_id}/agreements).'),
}).strict();

const VERBS = ['add', 'rewrite', 'end', 'replace'] as const;
export type AgreementVerb = (typeof VERBS)[number];

/** Which optional fields each verb needs and which it takes. */
const NEEDS: Record<AgreementVerb, { required: string[]; allowed: string[] }> = {
  add: { required: ['product_source_id', 'quantity'], allowed: ['product_source_id', 'quantity', 'unit_price', 'unit_cost', 'effective_date', 'description'] },
  rewrite: { required: ['line_source_id'], allowed: ['line_source_id', 'quantity', 'unit_price', 'unit_cost', 'effective_date'] },
  end: { required: ['line_source_id'], allowed: ['line_source_id', 'effective_date'] },
  replace: { required: ['line_source_id', 'product_source_id', 'quantity'], allowed: ['line_source_id', 'product_source_id', 'quantity', 'unit_price', 'unit_cost', 'effective_date', 'description'] },
};
const OPTIONAL = ['line_source_id', 'product_source_id', 'quantity', 'unit_price', 'unit_cost', 'effective_date', 'description'];

const amount = (what: string) => z.number().nullable().optional().openapi({ description: `${what}; negative is 422 \`validation\`.` });

export const AgreementLinesBody = keyedWrite('AgreementLinesBody', {
  verb: z.enum(VERBS).openapi({ description: '`add` a line for a product; `rewrite` a line\'s quantity, price or cost; `end` a line at `effective_date`; `replace`: end the line and add the product from the same date, under one key.' }),
  line_source_id: text(200).min(1).nullable().optional().openapi({ description: 'The line (rewrite, end, replace): `source_id` of one of the agreement\'s lines.' }),
  product_source_id: text(200).min(1).nullable().optional().openapi({ description: 'The catalogue product (add, replace): `source_id` from GET /tenants/{tenant_id}/products.' }),
  quantity: amount('Units of the line (add, replace: required; rewrite: the new quantity)'),
  unit_price: amount('Price per unit (default: the catalogue\'s)'),
  unit_cost: amount('Cost per unit (default: the catalogue\'s)'),
  effective_date: dayField(40).min(1).nullable().optional().openapi({ description: '`YYYY-MM-DD`: from when the change applies, or the day a line ends (default: today, UTC).' }),
  description: text(1000).min(1).nullable().optional().openapi({ description: 'Invoice text of an added line (default: the product\'s name).' }),
}, (b, ctx) => {
  const rule = NEEDS[b.verb];
  const body = b as Record<string, unknown>;
  for (const field of rule.required) {
    if (body[field] == null) ctx.addIssue({ code: 'custom', path: [field], message: `is required for verb ${b.verb}` });
  }
  for (const field of OPTIONAL) {
    if (body[field] != null && !rule.allowed.includes(field)) ctx.addIssue({ code: 'custom', path: [field], message: `is not used by verb ${b.verb}` });
  }
  if (b.verb === 'rewrite' && b.quantity == null && b.unit_price == null && b.unit_cost == null) {
    ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'a rewrite changes quantity, unit_price or unit_cost; give at least one' });
  }
});

/** Declared so the refusal is documented; every request is answered 422 `agreement_header_not_supported`. */
export const CreateAgreementBody = keyedWrite('CreateAgreementBody', {
  name: text(200).min(1),
  company_name: text(200).min(1),
  start_date: dayField(40).nullable().optional(),
});

const agreementId = z.string().openapi({ description: 'The agreement\'s id in the PSA.' });
const verb = z.enum(VERBS);

export const AgreementLineStep = z.object({
  step: z.enum(['add', 'rewrite', 'end']),
  ok: z.boolean(),
  line_source_id: z.string().nullable().openapi({ description: 'The line written (for an add: the new line).' }),
  reconciled: z.boolean().openapi({ description: 'The write had already landed (found by its marker or already in place) and was not sent again.' }),
  error: TargetError.nullable(),
}).strict().openapi('AgreementLineStep');

export const AgreementLinesPreview = previewResult('AgreementLinesPreview', { verb, agreement_source_id: agreementId });
export const AgreementLinesResult = commitResult('AgreementLinesResult', {
  verb, agreement_source_id: agreementId, connection_id: z.string(), connector: z.string(),
  steps: z.array(AgreementLineStep).openapi({ description: 'One per vendor write, in order (a replace: end, then add).' }),
  partial_failure: z.boolean().openapi({ description: 'A replace whose end landed and whose add did not (HTTP 207): retry with the same idempotency_key to finish it; the end is not sent again.' }),
  failed_step: z.enum(['add', 'rewrite', 'end']).nullable(),
  retryable: z.boolean().openapi({ description: 'The failure may pass on a retry with the same key (throttled or unavailable vendor).' }),
});
