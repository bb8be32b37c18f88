/** Identity requests and answers (docs/architecture.md, Companies, contacts and identity). */
import { commitResult, keyedWrite, previewResult } from '../operations/write-results';
import { listCursor, listEnvelope, pageQuery } from '../shared/paging';
import { text, wholeNumber, z } from '../shared/request';

const ref = text(200).min(1);
const isvIdField = z.string().max(100).nullable().optional()
  .openapi({ description: "MSP key only: whose book the decision is about (an ISV key always acts on its own)." });

export const BookCustomer = z.object({
  ref: ref.openapi({ description: "The ISV's own id of the customer." }),
  name: text(300).min(1),
  domain: text(300).nullable().optional(),
}).strict().openapi('BookCustomer');

export const PutBookBody = z.object({ customers: z.array(BookCustomer).max(10_000) }).strict().openapi('PutBookBody');
export const BookResult = z.object({
  upserted: z.number().int(), matched: z.number().int().openapi({ description: 'Customers of the book with a match, after auto-match ran.' }),
  left_over: z.number().int(),
}).strict().openapi('BookResult');
export const Book = listEnvelope('Book', 'identity/book', BookCustomer.extend({ created_at: z.string(), updated_at: z.string() }).strict().openapi('BookEntry'));
export const Removed = z.object({ ref: z.string(), removed: z.literal(true) }).strict().openapi('RemovedCustomer');

export const Mapping = z.object({
  isv_id: z.string(), customer_ref: z.string(), customer_name: z.string().nullable(),
  connection_id: z.string(), company_source_id: z.string(), company_name: z.string().nullable(),
  how: z.string().openapi({ description: 'auto_exact_name, manual, import or company_create.' }),
  decided_by: z.enum(['auto', 'isv', 'msp']), decided_at: z.string(),
}).strict().openapi('IdentityMapping');
export const MappingList = listEnvelope('IdentityMappingList', 'identity/mappings', Mapping);

const side = z.enum(['psa_company', 'isv_customer']);

export const RankedCandidate = z.object({
  side, id: z.string().openapi({ description: 'The company source_id, or the customer ref.' }), connection_id: z.string().nullable(), name: z.string(),
  score: z.number().openapi({ description: '0 to 1: how well it fits the subject (external id 0.95, the same name 0.9, the same normal form 0.85, shared words up to 0.8; a matching domain or phone adds to it).' }),
  reasons: z.array(z.enum(['external_id', 'exact_name', 'normalized_name', 'domain', 'phone', 'similar_name'])).openapi({
    description: '`external_id`: the customer ref is the company\'s identifier or an external id its record carries; `exact_name`: the same name but for case; `normalized_name`: the same once case, punctuation and legal suffixes (Ltd, Limited, Inc, LLC, GmbH...) are aside; `domain`: the book\'s domain is the company\'s web site; `phone`: the same number; `similar_name`: shared words.',
  }),
  identifier: z.string().nullable().openapi({ description: 'The PSA\'s own short name of the company (null for a customer).' }),
  city: z.string().nullable(), phone: z.string().nullable(), domain: z.string().nullable().openapi({ description: 'What the record says beside the name: it tells companies of one name apart.' }),
  matched_with: z.object({ id: z.string(), connection_id: z.string().nullable(), name: z.string().nullable() }).strict().nullable()
    .openapi({ description: 'Matched already (with this customer, or this company): unset that match before matching it elsewhere.' }),
}).strict().openapi('IdentityRankedCandidate');
export const UnmappedRow = z.object({
  side, id: z.string().openapi({ description: 'The company source_id, or the customer ref.' }), connection_id: z.string().nullable(), name: z.string(),
  state: z.enum(['needs_match', 'skipped']),
  candidates: z.array(z.object({ side, id: z.string(), connection_id: z.string().nullable(), name: z.string() }).strict().openapi('IdentityCandidate')),
  suggestions: z.array(RankedCandidate).openapi({ description: 'The best few unmatched rows of the other side, ranked by name (exact, normalised, shared words), external id, domain and phone. A suggestion is only offered: auto-match pairs exact normal names alone, and a person or the ISV decides the rest (identity/match accepts any company of the tenant).' }),
  actions: z.array(z.enum(['match', 'import', 'skip', 'unset'])).openapi({ description: 'The actions this row really has now: `import` only on a PSA company while the ISV has an import endpoint (PUT /tenants/{tenant_id}/identity/import-endpoint); `unset` only on a skipped row.' }),
}).strict().openapi('UnmappedRow');
export const UnmappedList = listEnvelope('UnmappedList', 'identity/unmapped', UnmappedRow, { extra: { isv_id: z.string() } });

/** The book pages by ref; mappings by when they were decided; leftovers by side, connection and id. */
export const BOOK_CURSOR = listCursor('identity_book', ['text']);
export const MAPPINGS_CURSOR = listCursor('identity_mappings', ['time', 'uuid', 'text']);
export const UNMAPPED_CURSOR = listCursor('identity_unmapped', ['text', 'text', 'text']);
export const MappingsQuery = pageQuery(MAPPINGS_CURSOR, { updatedSince: true }, { isv_id: isvIdField });
export const UnmappedQuery = pageQuery(UNMAPPED_CURSOR, { updatedSince: false }, { isv_id: isvIdField });
export const BookQuery = pageQuery(BOOK_CURSOR, { updatedSince: true }, {
  isv_id: z.string().max(100).nullable().optional().openapi({ description: 'Admin token only (GraphQL): whose book to read (an ISV key reads its own).' }),
});

export const CandidatesQuery = z.object({
  customer_ref: ref.nullable().optional().openapi({ description: 'Rank the PSA companies this customer of the book may be.' }),
  company_source_id: text(100).min(1).nullable().optional().openapi({ description: 'Rank the customers this PSA company may be; with customer_ref, score that one pair.' }),
  connection_id: z.string().max(100).nullable().optional(),
  q: text(200).nullable().optional().openapi({ description: 'Words to search for in place of the subject\'s name (alone: a search of the PSA companies).' }),
  limit: wholeNumber(1, 50).default(10).openapi({ type: 'integer', minimum: 1, maximum: 50, default: 10, description: 'How many candidates, 1 to 50 (default 10).' }),
  isv_id: isvIdField,
}).strict().openapi('IdentityCandidatesQuery');
export const Candidates = z.object({
  isv_id: z.string(),
  // The customer or company the candidates are for (its score is 0); null for a search alone.
  subject: RankedCandidate.nullable(),
  candidates: z.array(RankedCandidate).openapi({ description: 'Best first; matched rows included (see matched_with).' }),
}).strict().openapi('IdentityCandidates');

export const MatchBody = z.object({
  customer_ref: ref, company_source_id: text(100).min(1), connection_id: z.string().max(100).nullable().optional(), isv_id: isvIdField,
}).strict().openapi('IdentityMatchBody');
export const SubjectBody = z.object({
  customer_ref: ref.nullable().optional(), company_source_id: text(100).min(1).nullable().optional(),
  connection_id: z.string().max(100).nullable().optional(), isv_id: isvIdField,
}).strict().superRefine((b, ctx) => {
  if (Boolean(b.customer_ref) === Boolean(b.company_source_id)) ctx.addIssue({ code: 'custom', path: ['customer_ref'], message: 'name exactly one of customer_ref and company_source_id' });
}).openapi('IdentitySubjectBody');
export const Decision = z.object({
  action: z.enum(['match', 'skip', 'unset']), changed: z.boolean(), mapping: Mapping.nullable(),
}).strict().openapi('IdentityDecision');

export const ImportEndpointBody = z.object({ url: text(2048).min(1) }).strict().openapi('ImportEndpointBody');
export const ImportEndpointInfo = z.object({
  url: z.string(), secret: z.string().openapi({ description: '`whsec_<base64>`: import requests are signed with it the Standard Webhooks way. Shown here once.' }),
  created_at: z.string(),
}).strict().openapi('ImportEndpoint');

export const ImportBody = keyedWrite('IdentityImportBody', {
  company_source_ids: z.array(text(100).min(1)).min(1).max(1000).nullable().optional(),
  all_unmatched: z.boolean().nullable().optional(),
  connection_id: z.string().max(100).nullable().optional(),
  isv_id: isvIdField,
}, (b, ctx) => {
  if (Boolean(b.company_source_ids?.length) === Boolean(b.all_unmatched)) ctx.addIssue({ code: 'custom', path: ['company_source_ids'], message: 'name company_source_ids or set all_unmatched, not both' });
});

const ImportItem = z.object({
  company_source_id: z.string(), connection_id: z.string(), name: z.string(),
  customer_ref: z.string().nullable().openapi({ description: 'The ref the ISV answered (commit only).' }),
}).strict().openapi('ImportItem');
export const ImportPreview = previewResult('IdentityImportPreview', { companies: z.array(ImportItem) });
export const ImportResult = commitResult('IdentityImportResult', { companies: z.array(ImportItem) });
