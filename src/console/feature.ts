/**
 * The MSP's console (docs/architecture.md, Connect sessions and console): pages at /console that sign
 * in by a one-time link or the MSP key and run the same operations as REST with the tenant's MSP
 * caller; and two operations of its own, the link (`POST /tenants/{t}/console-links`, for scripts that
 * hand a person in; the connect flow never issues one) and the MSP key's rotation.
 */
import type { AccessService } from '../access/access.service';
import type { AuditService } from '../audit/audit.service';
import type { AppConfig } from '../config/config';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf } from '../operations/operation';
import { TenantPath } from '../shared/request';
import type { AdminService } from '../tenants/admin.service';
import type { ConsoleAuth } from './console-auth';
import { consoleDeps, type ConsolePagesServices } from './console-deps';
import { issueConsoleLink } from './console-links';
import { consoleRouter } from './router';
import * as S from './console.schemas';

/** The services the console's own operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface ConsoleServices {
  access: AccessService;
  admin: AdminService;
  audit: AuditService;
  config: Pick<AppConfig, 'publicUrl'>;
  consoleAuth: ConsoleAuth;
}
const defineOperation = operationsUsing<ConsoleServices>();

const createConsoleLink = defineOperation({
  name: 'create_console_link', kind: 'mutation', summary: 'A one-time sign-in link to the MSP\'s console', tag: 'Console', role: 'msp',
  description: 'MSP key. Answers a URL that signs its opener in to the console (`/console`) once, within 15 minutes; it is 32 random bytes, stored only as a hash, and spent by its first use. Issuing one changes nothing else; unused links simply expire.',
  http: { method: 'post', path: '/tenants/{tenant_id}/console-links', documented: false },
  path: TenantPath,
  responses: [{ status: 201, schema: S.ConsoleLink, description: 'The link, shown once.' }],
  errors: ['role_required'],
  handle: async (_input, ctx) => issueConsoleLink(ctx.services, tenantOf(ctx).tenant.id, 'msp'),
});

const iso = (d: Date) => d.toISOString();

const rotateMspKey = defineOperation({
  name: 'rotate_msp_key', kind: 'mutation', summary: 'Replace the tenant\'s MSP key (preview or commit)', tag: 'Console', role: 'msp',
  description: 'MSP key. `dry_run` (default true) lists the MSP keys in use and changes nothing. A commit (`dry_run: false` with an `idempotency_key`) issues a new MSP key, shown once in the answer, and revokes every other MSP key of the tenant at once (the one calling included). The key is not stored, so a repeated commit rotates again. Console sessions stay signed in.',
  http: { method: 'post', path: '/tenants/{tenant_id}/msp-key/rotate', documented: false },
  path: TenantPath, body: S.RotateMspKeyBody,
  responses: [
    { status: 200, schema: S.RotateMspKeyPreview, description: 'Preview: the keys a commit revokes; nothing changed.' },
    { status: 201, schema: S.RotateMspKeyResult, description: 'Rotated: the new key (shown once) and the revoked ones.' },
  ],
  statusOf: (r: { dry_run: boolean }) => (r.dry_run ? 200 : 201),
  errors: ['role_required'],
  handle: async ({ body }, ctx) => {
    const tenantId = tenantOf(ctx).tenant.id;
    const live = await ctx.services.access.mspKeysOf(tenantId);
    const info = (k: { id: string; prefix: string; createdAt: Date }) => ({ id: k.id, prefix: k.prefix, created_at: iso(k.createdAt) });
    if (body.dry_run) return { dry_run: true as const, current: live.map(info) };
    const { row, key } = await ctx.services.admin.issueMspKey(tenantId, 'rotated');
    for (const k of live) await ctx.services.admin.revokeApiKey(k.id);
    await ctx.services.audit.write({ tenantId, action: 'msp_key.rotate', outcome: 'ok', subjectRef: row.prefix, detail: { decided_by: 'msp', revoked: live.map((k) => k.prefix) } });
    return { dry_run: false as const, key, key_info: info(row), revoked: live.map(info) };
  },
});

export const consoleFeature: FeatureModule<ConsoleServices> = {
  name: 'console',
  operations: [createConsoleLink, rotateMspKey],
};

/**
 * The console's pages: a surface like REST, GraphQL and MCP (it runs any operation through the runner as
 * the signed-in MSP), so the runner is handed the whole graph, as the MCP adapter's is.
 */
export const consolePagesFeature: FeatureModule<ConsolePagesServices> = {
  name: 'console-pages',
  mount(app, services, operations) {
    app.use(consoleRouter(consoleDeps(services, operations)));
  },
};
