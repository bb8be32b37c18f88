/**
 * Identity operations (docs/architecture.md, Companies, contacts and identity): the ISV book, the import endpoint, mappings and
 * leftovers, and the decisions (match, skip, unset, import). ISV and MSP keys both act on the tenant's
 * rows (an MSP names the ISV whose book it decides on); an ISV sees only its own book. Auto-match runs
 * after every book change and after every sync that changed PSA companies.
 */
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { DecidedBy } from '../../entities';
import type { TenantAccess } from '../access/access.service';
import { actingAsIsv, isMspCaller, isvOfCaller, type Caller } from '../access/caller';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf, type OperationContext } from '../operations/operation';
import { writeResponses, writeStatus } from '../operations/write-results';
import { envelopeOf, pageOfAll, updatedSince } from '../shared/paging';
import { pathId, TenantPath } from '../shared/request';
import { checkReceiverUrl, ReceiverUrlRefused } from '../webhooks/ssrf-guard';
import { postToReceiver } from '../webhooks/webhook-sender';
import { DELIVERY_TIMEOUT_MS, type WebhooksService } from '../webhooks/webhooks.service';
import type { PsaCompany, UnmappedRow } from './identity.service';
import * as S from './identity.schemas';
import type { AccessService } from '../access/access.service';
import type { AuditService } from '../audit/audit.service';
import type { AppConfig } from '../config/config';
import type { SecretBox } from '../security/secret-box';
import type { WritePipeline } from '../writes/write-pipeline';
import type { IdentityService } from './identity.service';
import type { Logger } from 'pino';
import { reactTo } from '../shared/committed-changes';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface IdentityServices {
  access: AccessService;
  audit: AuditService;
  box: SecretBox;
  config: Pick<AppConfig, 'webhookAllowLoopback'>;
  identity: IdentityService;
  logger: Logger;
  pipeline: WritePipeline;
  webhooks: Pick<WebhooksService, 'resolve'>;
}
const defineOperation = operationsUsing<IdentityServices>();

/** Whose book: an ISV's own; an MSP names the ISV (isv_id) of its tenant. */
async function bookOwner(ctx: OperationContext<IdentityServices>, given: string | null | undefined): Promise<string> {
  return ctx.services.access.isvInScope(ctx.caller, tenantOf(ctx).tenant.id, given);
}

const decider = (caller: Caller): DecidedBy => (isMspCaller(caller) ? 'msp' : 'isv');
const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');

const putBook = defineOperation({
  name: 'put_identity_book', kind: 'mutation', summary: 'Push your customer list (your book)', tag: 'Identity', role: 'isv', grant: 'none', // The ISV's own book: no vendor write.
  description: 'Bulk upsert by `ref`. Auto-match runs before the answer: a customer and a PSA company whose names are the same (case, punctuation and legal suffixes aside) and unique on both sides are matched; nothing is ever imported.',
  http: { method: 'put', path: '/tenants/{tenant_id}/identity/book', documented: false },
  path: TenantPath, body: S.PutBookBody,
  responses: [{ status: 200, schema: S.BookResult, description: 'How many customers are matched and left over.' }],
  errors: ['role_required'],
  handle: async ({ body }, ctx) => ctx.services.identity.putBook(tenantOf(ctx), await bookOwner(ctx, null), body.customers),
});

const getBook = defineOperation({
  name: 'identity_book', kind: 'query', summary: 'Your customer list', tag: 'Identity', role: 'isv',
  http: { method: 'get', path: '/tenants/{tenant_id}/identity/book', documented: false },
  path: TenantPath, query: S.BookQuery,
  responses: [{ status: 200, schema: S.Book, description: 'Your book on this tenant, by ref.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const book = (await ctx.services.identity.book(access.tenant.id, await bookOwner(ctx, query.isv_id)))
      .map((c) => ({ ref: c.ref, name: c.name, domain: c.domain, created_at: iso(c.createdAt), updated_at: iso(c.updatedAt) }));
    const page = pageOfAll(updatedSince(book, query, (c) => c.updated_at), query, S.BOOK_CURSOR, ['text'], (c) => [c.ref]);
    return envelopeOf('identity/book', page, access.tenant.sandbox);
  },
});

const deleteCustomer = defineOperation({
  name: 'delete_identity_customer', kind: 'mutation', summary: 'Remove one customer from your book', tag: 'Identity', role: 'isv', grant: 'none', // The ISV's own book: no vendor write.
  http: { method: 'delete', path: '/tenants/{tenant_id}/identity/book/{ref}', documented: false },
  path: TenantPath.extend({ ref: pathId('ref') }).strict(),
  responses: [{ status: 200, schema: S.Removed, description: 'Removed, with its match or skip.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => {
    if (!(await ctx.services.identity.removeCustomer(tenantOf(ctx).tenant.id, await bookOwner(ctx, null), path.ref))) {
      throw new ServiceError('not_found', `No customer ${path.ref} in your book.`);
    }
    return { ref: path.ref, removed: true as const };
  },
});

const mappings = defineOperation({
  name: 'identity_mappings', kind: 'query', summary: 'Customer mappings', tag: 'Identity', role: 'reader',
  description: 'The matches of a book customer with a PSA company, with who decided and when (`auto` for auto-match). An ISV sees its own; an MSP key every ISV\'s (filter with isv_id).',
  http: { method: 'get', path: '/tenants/{tenant_id}/identity/mappings', documented: true },
  path: TenantPath, query: S.MappingsQuery,
  responses: [{ status: 200, schema: S.MappingList, description: 'The matches.' }],
  errors: [],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const isvs = isvOfCaller(ctx.caller) || query.isv_id ? [await bookOwner(ctx, query.isv_id)] : null;
    const all = updatedSince(await ctx.services.identity.mappings(access, isvs), query, (m) => m.decided_at);
    const page = pageOfAll(all, query, S.MAPPINGS_CURSOR, ['time', 'uuid', 'text'], (m) => [m.decided_at, m.isv_id, m.customer_ref]);
    return envelopeOf('identity/mappings', page, access.tenant.sandbox);
  },
});

const unmapped = defineOperation({
  name: 'identity_unmapped', kind: 'query', summary: 'Unmatched customers and companies', tag: 'Identity', role: 'reader',
  description: 'The leftovers of a book: PSA companies and book customers without a match, each with its state (needs_match or skipped), the candidates that share its name, and the actions it offers (match, import, skip, unset).',
  http: { method: 'get', path: '/tenants/{tenant_id}/identity/unmapped', documented: true },
  path: TenantPath, query: S.UnmappedQuery,
  responses: [{ status: 200, schema: S.UnmappedList, description: 'The leftovers.' }],
  errors: ['request_invalid'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = await bookOwner(ctx, query.isv_id);
    const page = pageOfAll(await ctx.services.identity.unmapped(access, isvId), query, S.UNMAPPED_CURSOR, ['text', 'text', 'text'], (r) => [r.side, r.connection_id ?? '', r.id]);
    return { isv_id: isvId, ...envelopeOf('identity/unmapped', page, access.tenant.sandbox) };
  },
});

const candidates = defineOperation({
  name: 'identity_candidates', kind: 'query', summary: 'Rank the PSA companies a customer may be (or search them)', tag: 'Identity', role: 'reader',
  description: 'Candidates for a decision, best first, each with a score (0 to 1), the reasons (`external_id`, `exact_name`, `normalized_name`, `domain`, `phone`, `similar_name`), what tells companies of one name apart (identifier, city, phone, domain) and whom it is matched with already. `customer_ref`: the PSA companies that customer may be; `company_source_id`: the customers that company may be; both: that one pair, scored; `q` alone searches the PSA companies by name. It decides nothing: identity/match records the match the MSP or the ISV chooses, whether the names are the same or not.',
  http: { method: 'get', path: '/tenants/{tenant_id}/identity/candidates', documented: false },
  path: TenantPath, query: S.CandidatesQuery,
  responses: [{ status: 200, schema: S.Candidates, description: 'The candidates, best first.' }],
  errors: ['validation', 'request_invalid'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = await bookOwner(ctx, query.isv_id);
    const found = await ctx.services.identity.candidates(access, isvId, {
      customerRef: query.customer_ref, q: query.q, limit: query.limit,
      company: query.company_source_id ? { sourceId: query.company_source_id, connectionId: query.connection_id } : null,
    });
    return { isv_id: isvId, ...found };
  },
});

async function mappingOf(ctx: OperationContext<IdentityServices>, isvId: string, customerRef: string) {
  return (await ctx.services.identity.mappings(tenantOf(ctx), [isvId])).find((m) => m.customer_ref === customerRef) ?? null;
}

async function companyOf(ctx: OperationContext<IdentityServices>, sourceId: string | null | undefined, connectionId: string | null | undefined): Promise<PsaCompany | null> {
  return sourceId ? ctx.services.identity.company(tenantOf(ctx), sourceId, connectionId) : null;
}

const match = defineOperation({
  name: 'identity_match', kind: 'mutation', summary: 'Match a customer with a PSA company', tag: 'Identity', role: 'reader', grant: 'none', // Decisions on the tenant's identity rows: no vendor write.
  description: 'Any PSA company of the tenant, whatever its name: a match between names that differ ("Fourth Coffee Roasters Limited" and "Fourth Coffee") is a decision the ISV or the MSP (naming isv_id) may make; identity/candidates ranks the companies. Auto-match alone pairs exact normal names only. A customer or company matched with another already is refused (request_invalid): unset that first.',
  http: { method: 'post', path: '/tenants/{tenant_id}/identity/match', documented: false },
  path: TenantPath, body: S.MatchBody,
  responses: [{ status: 200, schema: S.Decision, description: 'The match.' }],
  errors: ['request_invalid', 'validation'],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = await bookOwner(ctx, body.isv_id);
    const company = (await companyOf(ctx, body.company_source_id, body.connection_id))!;
    await ctx.services.identity.match(access, isvId, body.customer_ref, company, 'manual', decider(ctx.caller));
    await audit(ctx, 'identity.match', `${body.customer_ref}->${company.source_id}`, isvId, await labelOf(ctx, isvId, body.customer_ref, company));
    return { action: 'match' as const, changed: true, mapping: await mappingOf(ctx, isvId, body.customer_ref) };
  },
});

const skip = defineOperation({
  name: 'identity_skip', kind: 'mutation', summary: 'Set a leftover aside (Skip)', tag: 'Identity', role: 'reader', grant: 'none', // Decisions on the tenant's identity rows: no vendor write.
  http: { method: 'post', path: '/tenants/{tenant_id}/identity/skip', documented: false },
  path: TenantPath, body: S.SubjectBody,
  responses: [{ status: 200, schema: S.Decision, description: 'Skipped.' }],
  errors: ['request_invalid', 'validation'],
  handle: async ({ body }, ctx) => {
    const isvId = await bookOwner(ctx, body.isv_id);
    const company = await companyOf(ctx, body.company_source_id, body.connection_id);
    await ctx.services.identity.skip(tenantOf(ctx), isvId, { customerRef: body.customer_ref, company }, decider(ctx.caller));
    await audit(ctx, 'identity.skip', body.customer_ref ?? body.company_source_id ?? null, isvId, await labelOf(ctx, isvId, body.customer_ref, company));
    return { action: 'skip' as const, changed: true, mapping: null };
  },
});

const unset = defineOperation({
  name: 'identity_unset', kind: 'mutation', summary: 'Back to Needs match (it only unsets)', tag: 'Identity', role: 'reader', grant: 'none', // Decisions on the tenant's identity rows: no vendor write.
  description: 'Removes the match or the skip of one row; the row goes back to Needs match (for a match, both the customer and the company: this is how a match is undone). Nothing else changes, and auto-match does not run.',
  http: { method: 'post', path: '/tenants/{tenant_id}/identity/unset', documented: false },
  path: TenantPath, body: S.SubjectBody,
  responses: [{ status: 200, schema: S.Decision, description: 'Unset (changed false: there was nothing to unset).' }],
  errors: ['validation'],
  handle: async ({ body }, ctx) => {
    const isvId = await bookOwner(ctx, body.isv_id);
    const company = await companyOf(ctx, body.company_source_id, body.connection_id);
    // Read before the unset: the match being undone names the other side.
    const was = body.customer_ref ? await mappingOf(ctx, isvId, body.customer_ref) : null;
    const changed = await ctx.services.identity.unset(tenantOf(ctx), isvId, { customerRef: body.customer_ref, company });
    const label = was ? [was.customer_name ?? was.customer_ref, was.company_name ?? was.company_source_id].join(' → ') : await labelOf(ctx, isvId, body.customer_ref, company);
    await audit(ctx, 'identity.unset', body.customer_ref ?? body.company_source_id ?? null, isvId, label);
    return { action: 'unset' as const, changed, mapping: null };
  },
});

const putImportEndpoint = defineOperation({
  name: 'put_import_endpoint', kind: 'mutation', summary: 'Register your import endpoint', tag: 'Identity', role: 'isv', grant: 'none', // The ISV's own endpoint: no vendor write.
  description: 'Import (identity/import) creates a leftover PSA company as a customer in your system by POSTing it here, signed the Standard Webhooks way with the secret of this answer; your answer must be JSON carrying the new customer\'s `ref`. `https://` on a public address (the webhook rules).',
  http: { method: 'put', path: '/tenants/{tenant_id}/identity/import-endpoint', documented: false },
  path: TenantPath, body: S.ImportEndpointBody,
  responses: [{ status: 200, schema: S.ImportEndpointInfo, description: 'Registered; the secret is shown once.' }],
  errors: ['validation', 'role_required'],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = await bookOwner(ctx, null);
    await guardUrl(ctx.services, body.url);
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const row = await ctx.services.identity.putImportEndpoint(access.tenant.id, isvId, body.url, ctx.services.box.seal(secret));
    return { url: row.url, secret, created_at: iso(row.createdAt) };
  },
});

async function guardUrl(services: IdentityServices, url: string) {
  try {
    return await checkReceiverUrl(url, { allowLoopback: services.config.webhookAllowLoopback, resolve: services.webhooks.resolve });
  } catch (err) {
    if (!(err instanceof ReceiverUrlRefused)) throw err;
    throw new ServiceError('validation', `url: ${err.message}`, { details: { field: 'url', reason: err.message } });
  }
}

const importCompanies = defineOperation({
  name: 'identity_import', kind: 'mutation', summary: 'Import leftover PSA companies into your system', tag: 'Identity', role: 'reader', grant: 'none', // Writes to the ISV's own import endpoint, not to a vendor.
  description: 'Creates each named leftover PSA company (or every unmatched one) as a customer in the ISV\'s own system through its import endpoint, then matches it. Preview first (nothing is sent); a commit needs idempotency_key and runs once per key. 501 `not_supported` without an import endpoint.',
  http: { method: 'post', path: '/tenants/{tenant_id}/identity/import', documented: false },
  path: TenantPath, body: S.ImportBody,
  responses: writeResponses(S.ImportPreview, S.ImportResult, [200, 201]),
  statusOf: writeStatus,
  errors: ['not_supported', 'validation', 'vendor_error', 'idempotency_conflict', 'idempotency_in_progress'],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = await bookOwner(ctx, body.isv_id);
    const endpoint = await ctx.services.identity.importEndpoint(access.tenant.id, isvId);
    if (!endpoint) throw ServiceError.notSupported('This ISV has registered no import endpoint (PUT /tenants/{tenant_id}/identity/import-endpoint): import is unavailable.');
    const url = new URL(endpoint.url);
    const payload = (r: UnmappedRow) => ({ type: 'company.import', tenant_id: access.tenant.id, company: { source_id: r.id, connection_id: r.connection_id, name: r.name } });
    // The import "vendor" is the ISV itself: the skeleton still audits, checks and runs once per key.
    const caller = actingAsIsv(ctx.caller, isvId);
    return ctx.services.pipeline.write({
      caller, access, operation: 'identity.import', request: body,
      prepare: async () => {
        const leftovers = (await ctx.services.identity.unmapped(access, isvId)).filter((r) => r.side === 'psa_company' && r.state === 'needs_match');
        const rows = body.all_unmatched ? leftovers : body.company_source_ids!.map((id) => {
          const row = leftovers.find((r) => r.id === id && (!body.connection_id || r.connection_id === body.connection_id));
          if (!row) throw new ServiceError('validation', `Company ${id} is not an unmatched PSA company of this book.`, { details: { field: 'company_source_ids' } });
          return row;
        });
        // The endpoint's address is checked here, so that a preview refuses what its commit would.
        return { rows, target: await guardUrl(ctx.services, endpoint.url) };
      },
      targets: () => [],
      preview: ({ rows }) => ({
        dry_run: true as const,
        preview: { targets: rows.length ? [{ connection_id: rows[0].connection_id!, connector: 'isv_import', requests: rows.map((r) => ({ method: 'POST' as const, path: url.pathname, body: payload(r) })) }] : [] },
        companies: rows.map((r) => ({ company_source_id: r.id, connection_id: r.connection_id!, name: r.name, customer_ref: null })),
      }),
      commit: async ({ rows, target }, reservation) => {
        const signer = new StandardWebhook(ctx.services.box.open(endpoint.secretEncrypted));
        const done = [];
        for (const r of rows) {
          const body = JSON.stringify(payload(r));
          // Stable per reservation and company: a receiver that dedupes on webhook-id sees a retry as one.
          const id = `imp_${reservation.id}_${r.connection_id}_${r.id}`.slice(0, 200);
          const now = new Date();
          const sent = await postToReceiver(target, body, {
            'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': signer.sign(id, now, body), 'Service-Signature': signer.sign(id, now, body),
          }, DELIVERY_TIMEOUT_MS);
          let ref: unknown;
          try { ref = sent.body ? (JSON.parse(sent.body) as { ref?: unknown }).ref : undefined; } catch { ref = undefined; }
          if (!sent.statusCode || sent.statusCode >= 300 || typeof ref !== 'string' || !ref || ref.length > 200) {
            throw new ServiceError('vendor_error', `The import endpoint did not create ${r.name}: ${sent.error ?? `it answered ${sent.statusCode}${typeof ref === 'string' ? '' : ' without a ref'}`}.`, { details: { company_source_id: r.id, imported: done.length } });
          }
          await ctx.services.identity.addCustomer(access.tenant.id, isvId, { ref, name: r.name });
          await ctx.services.identity.match(access, isvId, ref, { connection_id: r.connection_id!, source_id: r.id, name: r.name, identifier: null }, 'import', decider(ctx.caller));
          done.push({ company_source_id: r.id, connection_id: r.connection_id!, name: r.name, customer_ref: ref });
        }
        return { dry_run: false as const, idempotent_replay: false, created: done.length > 0, companies: done };
      },
    });
  },
});

/**
 * What a person reads beside an identity decision's subject: the customer's name in the ISV's book and
 * the PSA company's, "customer → company" for a pair (the subject ids alone are refs and vendor ids).
 */
async function labelOf(ctx: OperationContext<IdentityServices>, isvId: string, customerRef: string | null | undefined, company: PsaCompany | null): Promise<string | null> {
  const customer = customerRef ? (await ctx.services.identity.customerName(tenantOf(ctx).tenant.id, isvId, customerRef)) ?? customerRef : null;
  const parts = [customer, company ? company.name ?? company.source_id : null].filter((p): p is string => Boolean(p));
  return parts.length ? parts.join(' → ') : null;
}

async function audit(ctx: OperationContext<IdentityServices>, action: string, subjectRef: string | null, isvId: string, subjectLabel: string | null): Promise<void> {
  await ctx.services.audit.write({ tenantId: tenantOf(ctx).tenant.id, isvId, action, outcome: 'ok', subjectRef, detail: { decided_by: decider(ctx.caller), ...(subjectLabel ? { subject_label: subjectLabel } : {}) } });
}

/** Auto-match for every book of a tenant, after a sync changed its PSA companies. */
async function autoMatchTenant(services: IdentityServices, tenantId: string): Promise<void> {
  const access: TenantAccess = await services.access.tenantAccess({ kind: 'admin' }, tenantId);
  for (const isvId of await services.identity.isvsWithBooks(tenantId)) await services.identity.autoMatch(access, isvId);
}

export const identityFeature: FeatureModule<IdentityServices> = {
  name: 'identity',
  operations: [putBook, getBook, deleteCustomer, mappings, unmapped, candidates, match, skip, unset, putImportEndpoint, importCompanies],
  reactions: (services) => [
    // A sync changed a tenant's PSA companies: auto-match once the page has committed.
    reactTo('records.page_written', 'identity: auto-match', {
      async written(_m, scope, result) {
        if (scope.resource !== 'companies' || scope.connection.kind !== 'psa') return;
        if (result.created.length === 0 && result.updated.length === 0) return;
        return () => autoMatchTenant(services, scope.tenantId).catch((err: Error) => services.logger.error({ tenantId: scope.tenantId, err: err.message }, 'auto-match failed'));
      },
    }),
  ],
};

