/** The sandbox (docs/architecture.md, Sandbox), read from fixtures/sandbox.json: the ISV, the tenants, their connections. */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ConnectionKind } from '../../entities/tenancy';
import { GRANT_KEYS, isGrantKey, type GrantKey } from '../access/caller';
import { fixturesDir } from '../shared/project-root';

export interface SandboxConnectionDef {
  kind: ConnectionKind;
  connector: string;
  /** Path under our public URL. */
  path: string;
  credentials: Record<string, string>;
}

export interface SandboxTenantDef {
  slug: string;
  name: string;
  /** The tenant's fixed development MSP key (public, like the sandbox data). */
  mspKey: string;
  connections: SandboxConnectionDef[];
  grants: readonly GrantKey[];
  /** The sandbox ISV's book on this tenant (fixtures/<slug>/isv-book.json). */
  book: { ref: string; name: string; domain?: string | null }[];
  /**
   * A sync failure the sandbox shows in its first start's history (the console's health page explains
   * it): one vendor answer, refused once, on one connection, after the first sync; the next sync recovers.
   */
  firstSyncFailure: { connector: string; pathIncludes: string; status: number } | null;
}

const File = z.object({
  _comment: z.string().optional(),
  isv: z.object({ name: z.string(), supported_targets: z.array(z.string()), recommendation: z.record(z.string(), z.string()) }),
  tenants: z.array(z.object({
    slug: z.string(), name: z.string(), msp_key: z.string().startsWith('sk_msp_'),
    connections: z.array(z.object({
      kind: z.enum(['psa', 'rmm', 'distributor']), connector: z.string(), path: z.string().startsWith('/'),
      credentials: z.record(z.string(), z.string()), _comment: z.string().optional(),
    })),
    grants_withheld: z.array(z.string().refine(isGrantKey, 'not a grant key')),
    first_sync_failure: z.object({ connector: z.string(), path_includes: z.string(), status: z.number().int(), _comment: z.string().optional() }).optional(),
  })),
});

const file = File.parse(JSON.parse(fs.readFileSync(path.join(fixturesDir(), 'sandbox.json'), 'utf8')));

export const SANDBOX_ISV_NAME = file.isv.name;
export const SANDBOX_SUPPORTED_TARGETS = file.isv.supported_targets;
/** The sandbox ISV's write-back recommendation. */
export const SANDBOX_RECOMMENDATION = file.isv.recommendation;

export const SANDBOX_TENANTS: readonly SandboxTenantDef[] = file.tenants.map((t) => ({
  slug: t.slug,
  name: t.name,
  mspKey: t.msp_key,
  connections: t.connections.map(({ _comment, ...c }) => c),
  grants: GRANT_KEYS.filter((k) => !t.grants_withheld.includes(k)),
  book: readBook(t.slug),
  firstSyncFailure: t.first_sync_failure
    ? { connector: t.first_sync_failure.connector, pathIncludes: t.first_sync_failure.path_includes, status: t.first_sync_failure.status } : null,
}));

function readBook(slug: string): SandboxTenantDef['book'] {
  const file = path.join(fixturesDir(), slug, 'isv-book.json');
  if (!fs.existsSync(file)) return [];
  return z.array(z.object({ ref: z.string(), name: z.string(), domain: z.string().nullable().optional() }).strict()).parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}
