/**
 * One-time console sign-in links (docs/architecture.md, Connect sessions and console), issued by the MSP
 * key only (`POST /tenants/{t}/console-links`), for scripts that hand a person in. The connect flow never
 * issues one: the link is the ISV's, so its holder must not become the MSP.
 */
import type { AuditService } from '../audit/audit.service';
import type { AppConfig } from '../config/config';
import type { ConsoleAuth } from './console-auth';

/** Issues a one-time console sign-in link for a tenant (15 minutes, single use), audited with who asked (`by`: `msp` for the MSP key). */
export async function issueConsoleLink(
  services: { consoleAuth: ConsoleAuth; config: Pick<AppConfig, 'publicUrl'>; audit: Pick<AuditService, 'write'> },
  tenantId: string, by: string,
): Promise<{ url: string; expires_at: string }> {
  const { token, expiresAt } = await services.consoleAuth.issueLink(tenantId, by);
  await services.audit.write({ tenantId, action: 'console.link_issued', outcome: 'ok', detail: { by, expires_at: expiresAt.toISOString() } });
  return { url: `${services.config.publicUrl}/console/link/${token}`, expires_at: expiresAt.toISOString() };
}

