/**
 * The lines `npm start` prints once it listens. Secrets an operator configured are never printed in full
 * (they are in the operator's own configuration already): SANDBOX_API_KEY shows as `sk_s…9a2f`, a given
 * ADMIN_TOKEN not at all. What the service generated or what is public is printed: the sandbox's public
 * development keys (README), and a generated ADMIN_TOKEN, once per start (it is new at every start and
 * nowhere else to be read).
 */
import type { AppConfig } from './config';
import { DEFAULT_SANDBOX_API_KEY } from './config';

/** `abcd…wxyz`: enough to tell which key is configured, not enough to use it. */
export function maskSecret(secret: string): string {
  return secret.length <= 12 ? '…' : `${secret.slice(0, 4)}…${secret.slice(-4)}`;
}

export interface BannerFacts {
  storeKind: 'embedded' | 'postgres';
  queueDriver: string;
  sandbox: { apiKey: string | undefined; tenants: { slug: string; id: string; mspKey: string }[] } | null;
}

export function startupBanner(config: Pick<AppConfig, 'role' | 'publicUrl' | 'dataDir' | 'adminToken' | 'adminTokenGenerated'>, facts: BannerFacts): string[] {
  const lines = [
    '',
    `MSP integration service ${config.role === 'worker' ? 'worker' : 'listening'} on ${config.publicUrl}`,
    `  store: ${facts.storeKind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${config.dataDir}` : 'PostgreSQL'}; jobs: ${facts.queueDriver}`,
  ];
  const apiKey = facts.sandbox?.apiKey;
  const publicKey = apiKey === DEFAULT_SANDBOX_API_KEY;
  const shownKey = apiKey === undefined ? undefined : publicKey ? apiKey : `${maskSecret(apiKey)} (from SANDBOX_API_KEY)`;
  if (facts.sandbox) {
    lines.push(`  sandbox API key: ${shownKey ?? '(none: set SANDBOX_API_KEY)'}`);
    // The sandbox tenants' MSP keys are fixed public development keys (README).
    for (const t of facts.sandbox.tenants) lines.push(`  sandbox tenant ${t.slug}: ${t.id}  (MSP key ${t.mspKey})`);
  }
  if (config.adminTokenGenerated) lines.push(`  admin token (GraphQL at /graphql, this run only): ${config.adminToken}`);
  lines.push(`  try: curl -H 'X-API-Key: ${publicKey ? apiKey : '<key>'}' ${config.publicUrl}/tenants`, '');
  return lines;
}
