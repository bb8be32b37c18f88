/**
 * Companies and contacts (interface document rules 10 and 12, docs/architecture.md, Companies, contacts and identity; Distributor).
 * Company create always matches first and never creates an unmatched company in the PSA: one match
 * answers it (and records the identity match for external_id), two or more are refused with the
 * candidates, none is refused, unless `fan_out: ["distributor"]` asks for the distributor create,
 * which matches there first and creates the rest at the distributor, preview first, once per key.
 * Contacts are list and match only.
 */
import type { z as zod } from 'zod';
import type { Connection } from '../../entities';
import { isvOf, type TenantAccess, type AccessService } from '../access/access.service';
import { Grant } from '../access/caller';
import { companyCreateTargets } from '../access/target-access';
import type { DistributorCompanyDraft } from '../connectors/distributor-write-types';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../operations/feature-module';
import { ambiguous, type PsaCompany, type IdentityService } from '../identity/identity.service';
import { normalizeName } from '../identity/normalize';
import { derivedGrant, operationsUsing, tenantOf } from '../operations/operation';
import { writeResponses, writeStatus } from '../operations/write-results';
import type { RecordsService } from '../records/records.service';
import { ContactList } from '../records/record.schemas';
import { ErrorBody } from '../errors/error-body.schemas';
import { checkWrite, previewWrites, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';
import { TenantPath, z } from '../shared/request';
import * as S from './company.schemas';
import type { SyncService } from '../sync/sync.service';
import type { CompaniesStore } from './companies.store';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface CompaniesServices {
  access: AccessService;
  companiesStore: CompaniesStore;
  identity: IdentityService;
  pipeline: WritePipeline;
  records: RecordsService;
  sync: SyncService;
}
const defineOperation = operationsUsing<CompaniesServices>();

type Body = zod.infer<typeof S.CreateCompanyBody>;
type Side = NonNullable<zod.infer<typeof S.CompanyCreateResult>['distributor']>;

const ref = (c: PsaCompany) => ({ source_id: c.source_id, name: c.name, identifier: c.identifier });

/** Companies of the given connections whose normal name is the body's. */
async function byName(store: CompaniesStore, access: TenantAccess, connections: Connection[], name: string): Promise<PsaCompany[]> {
  if (connections.length === 0) return [];
  const rows = await store.companiesOf(access.tenant.id, connections.map((c) => c.id));
  const wanted = normalizeName(name);
  return rows.filter((r) => normalizeName(r.name) === wanted);
}

function draftOf(b: Body): DistributorCompanyDraft {
  return {
    name: b.name,
    address: b.address ? { street: b.address.street, street2: b.address.street2 ?? null, city: b.address.city, stateOrProvince: b.address.state_or_province, postalCode: b.address.postal_code, country: b.address.country } : null,
    phone: b.phone ?? null, website: b.website ?? null, externalId: b.external_id ?? null,
    billOnBehalfOfEnabled: b.bill_on_behalf_of_enabled ?? null, selfServiceAllowed: b.self_service_allowed ?? null,
    orderApprovalRequired: b.order_approval_required ?? null,
    contacts: (b.contacts ?? []).map((c) => ({ firstName: c.first_name, lastName: c.last_name, email: c.email, phone: c.phone ?? null })),
  };
}

const createCompany = defineOperation({
  name: 'create_company', kind: 'mutation', summary: 'Create a company (match first)', tag: 'Writes', role: 'isv',
  // With fan_out distributor: distributor.company.create on the distributor (none connected: the handler's
  // 409 distributor_required comes first); otherwise psa.company.create on the PSA.
  grant: derivedGrant([
    { key: Grant.CompanyCreate, kind: 'psa', when: '`fan_out` leaves out `distributor`' },
    { key: Grant.DistributorCompanyCreate, kind: 'distributor', when: 'it names `distributor`' },
  ], ({ body }, { access }) => (body.fan_out?.includes('distributor')
    ? (access.connections.some((c) => c.kind === 'distributor') ? { key: Grant.DistributorCompanyCreate, kind: 'distributor' } : null)
    : { key: Grant.CompanyCreate, kind: 'psa' })),
  description: 'Matches first (external_id against your identity matches, then the company name, case, punctuation and legal suffixes aside): one PSA match answers it and, with external_id, records the match; two or more are 409 `company_match_ambiguous` with the candidates; none is 403 `psa_company_create_refused`, since an unmatched company is never created in the PSA. With `fan_out: ["distributor"]` (grant `distributor.company.create`; no distributor connection: 409 `distributor_required`) it matches at the distributor and creates the company there when none matches, with the fields the distributor requires (address, phone, website, the three flags): not a PSA create. Preview by default; a commit needs idempotency_key.',
  http: { method: 'post', path: '/tenants/{tenant_id}/companies', documented: true },
  path: TenantPath, body: S.CreateCompanyBody,
  responses: writeResponses(S.CompanyCreatePreview, S.CompanyCreateResult, [200, 201]),
  statusOf: writeStatus,
  errors: ['grant_missing', 'psa_company_create_refused', 'company_match_ambiguous', 'distributor_required', 'validation',
    'idempotency_conflict', 'idempotency_in_progress', 'rate_limited', 'vendor_error', 'vendor_unavailable', 'role_required'],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const { services } = ctx;
    const isvId = isvOf(ctx.caller);
    const distributorAsked = body.fan_out?.includes('distributor') ?? false;
    const distributors = access.connections.filter((c) => c.kind === 'distributor');
    // A distributor grant needs a distributor connection: that is checked first (docs/architecture.md, Distributor).
    if (distributorAsked && distributors.length === 0) throw new ServiceError('distributor_required', 'This tenant has no connected distributor: company create at a distributor is not possible.');
    const { psa, distributor } = companyCreateTargets(services.access, access, ctx.granted, distributorAsked);
    return services.pipeline.write({
      caller: ctx.caller, access, operation: 'company.create', subjectRef: body.name, request: body,
      prepare: async () => {
        // external_id first: a customer of the caller's book already matched.
        let psaMatch: PsaCompany | null = null;
        if (body.external_id) {
          psaMatch = await services.companiesStore.matchedCompany(access.tenant.id, isvId, body.external_id, psa.map((c) => c.id));
        }
        if (!psaMatch) {
          const found = await byName(services.companiesStore, access, psa, body.name);
          if (found.length > 1) throw ambiguous(body.name, found);
          psaMatch = found[0] ?? null;
        }
        if (!psaMatch && !distributor) {
          throw new ServiceError('psa_company_create_refused', `No PSA company is named "${body.name}", and the service never creates an unmatched company in the PSA.`);
        }
        let side: { connection: Connection; match: PsaCompany | null; write: PlannedWrite } | null = null;
        if (distributor) {
          const found = await byName(services.companiesStore, access, [distributor], body.name);
          if (found.length > 1) throw ambiguous(body.name, found);
          const write: PlannedWrite = { connection: distributor, name: 'company.create', input: draftOf(body) };
          if (!found[0]) checkWrite(write);
          side = { connection: distributor, match: found[0] ?? null, write };
        }
        return { psaMatch, side };
      },
      targets: (p) => (p.side && !p.side.match ? [p.side.connection] : []),
      preview: (p) => ({
        dry_run: true as const,
        matched: p.psaMatch !== null, company: p.psaMatch && ref(p.psaMatch), mapping_recorded: Boolean(p.psaMatch && body.external_id),
        preview: { targets: p.side && !p.side.match ? previewWrites([p.side.write]) : [] },
        distributor: p.side && { connection_id: p.side.connection.id, connector: p.side.connection.connector, matched: p.side.match !== null, created: false, company: p.side.match && ref(p.side.match) },
      }),
      commit: async (p, run) => {
        let distributorSide: Side | null = null;
        if (p.side) {
          distributorSide = { connection_id: p.side.connection.id, connector: p.side.connection.connector, matched: p.side.match !== null, created: false, company: p.side.match && ref(p.side.match) };
          if (!p.side.match) {
            const [o] = await run.send([p.side.write]);
            if (!o.ok) throw o.error!;
            distributorSide = { ...distributorSide, created: true, company: { source_id: o.result!.companyRef!, name: body.name, identifier: body.external_id ?? null } };
            // The new company is read back into the store (a later create matches it instead of creating again).
            await services.sync.syncConnection(p.side.connection.id, { resources: ['companies'] }).catch(() => undefined);
          }
        }
        let mappingRecorded = false;
        if (p.psaMatch && body.external_id) {
          await services.identity.addCustomer(access.tenant.id, isvId, { ref: body.external_id, name: body.name });
          mappingRecorded = await services.identity.match(access, isvId, body.external_id, p.psaMatch, 'company_create', 'isv').then(() => true, (err) => {
            // A different match for this ref or this company stands: the caller settles it in identity.
            if (!(err instanceof ServiceError)) throw err;
            return false;
          });
        }
        return {
          dry_run: false as const, idempotent_replay: false, created: distributorSide?.created ?? false,
          matched: p.psaMatch !== null, company: p.psaMatch && ref(p.psaMatch), mapping_recorded: mappingRecorded,
          distributor: distributorSide,
        };
      },
    });
  },
});

const matchContacts = defineOperation({
  name: 'match_contacts', kind: 'query', summary: 'Match a contact', tag: 'Reads', role: 'reader',
  description: 'Exact email (any case), else the name (its normal form) within the company named. Answers every match, none when nothing matches. There is no contact create.',
  http: { method: 'post', path: '/tenants/{tenant_id}/contacts/match', documented: false },
  path: TenantPath, body: S.ContactMatchBody,
  responses: [{ status: 200, schema: z.object({ matches: ContactList.shape.contacts }).strict().openapi('ContactMatches'), description: 'The matches.' }],
  errors: [],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const rows = await ctx.services.companiesStore.contacts(access.tenant.id, body.email ?? null, access.connections.filter((c) => c.kind === 'psa').map((c) => c.id));
    let matches = rows;
    if (!body.email) {
      const wanted = normalizeName(body.name!);
      const company = body.company_name ? normalizeName(body.company_name) : null;
      matches = rows.filter((r) => normalizeName(`${r.first_name ?? ''} ${r.last_name ?? ''}`) === wanted && (!company || (r.company_name && normalizeName(r.company_name) === company)));
    }
    // Each match as the contacts list shows it.
    return { matches: await ctx.services.records.byIds(access, 'contacts', matches.map((r) => r.id)) };
  },
});

const createContact = defineOperation({
  name: 'create_contact', kind: 'mutation', summary: 'There is no contact create', tag: 'Reads', role: 'reader', graph: false, grant: 'none', // Always refused: nothing is written.
  description: 'Contacts are list and match only (interface document rule 10): 405 `method_not_allowed`.',
  http: { method: 'post', path: '/tenants/{tenant_id}/contacts', documented: false },
  path: TenantPath,
  responses: [{ status: 405, schema: ErrorBody, description: 'Contacts cannot be created.' }],
  errors: ['method_not_allowed'],
  handle: async () => {
    throw new ServiceError('method_not_allowed', 'Contacts are list and match only: there is no contact create (GET lists them, POST .../contacts/match matches one).', { allow: ['GET'] });
  },
});

export const companiesFeature: FeatureModule<CompaniesServices> = { name: 'companies', operations: [createCompany, matchContacts, createContact] };
