/** Company create (CreateCompanyBody, docs/architecture.md, Companies, contacts and identity; Distributor) and contact match. */
import { commitResult, keyedWrite, previewResult } from '../operations/write-results';
import { text, z } from '../shared/request';

export const CompanyAddress = z.object({
  street: text(300).min(1), street2: text(300).nullable().optional(), city: text(200).min(1),
  state_or_province: text(200).min(1), postal_code: text(50).min(1),
  country: text(2).openapi({ description: 'ISO 3166-1 alpha-2, two capital letters.' }),
}).strict().openapi('CompanyAddress');

export const CompanyContact = z.object({
  first_name: text(200).min(1), last_name: text(200).min(1), email: text(320).min(1), phone: text(100).nullable().optional(),
}).strict().openapi('CompanyContact');

export const CreateCompanyBody = keyedWrite('CreateCompanyBody', {
  name: text(300).min(1),
  address: CompanyAddress.nullable().optional(),
  phone: text(100).nullable().optional(),
  website: text(2048).nullable().optional(),
  external_id: text(200).nullable().optional().openapi({ description: "Your customer ref: a match is recorded for it in identity." }),
  contacts: z.array(CompanyContact).max(50).nullable().optional(),
  bill_on_behalf_of_enabled: z.boolean().nullable().optional(),
  order_approval_required: z.boolean().nullable().optional(),
  self_service_allowed: z.boolean().nullable().optional(),
  fan_out: z.array(z.enum(['distributor'])).max(1).nullable().optional()
    .openapi({ description: '["distributor"]: match at the connected distributor and create it there when it has none of that name. Never a PSA create.' }),
});

export const CompanyRef = z.object({ source_id: z.string(), name: z.string(), identifier: z.string().nullable() }).strict().openapi('CompanyRef');

const DistributorSide = z.object({
  connection_id: z.string(), connector: z.string(),
  matched: z.boolean(), created: z.boolean(),
  company: CompanyRef.nullable().openapi({ description: 'The distributor company matched or created (null in a preview of a create).' }),
}).strict().openapi('DistributorCompanySide');

const shape = {
  matched: z.boolean().openapi({ description: 'A PSA company matched (the PSA side never creates).' }),
  company: CompanyRef.nullable().openapi({ description: 'The matched PSA company.' }),
  mapping_recorded: z.boolean().openapi({ description: 'A match for external_id was (or would be) recorded in identity.' }),
  distributor: DistributorSide.nullable(),
};
export const CompanyCreatePreview = previewResult('CompanyCreatePreview', shape);
export const CompanyCreateResult = commitResult('CompanyCreateResult', shape);

export const ContactMatchBody = z.object({
  email: text(320).min(1).nullable().optional(), name: text(400).min(1).nullable().optional(), company_name: text(300).min(1).nullable().optional(),
}).strict().superRefine((b, ctx) => {
  if (!b.email && !b.name) ctx.addIssue({ code: 'custom', path: ['email'], message: 'give email or name' });
}).openapi('ContactMatchBody');
