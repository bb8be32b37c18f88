/** The ids the examples of /openapi.json name: the running sandbox's (alpha tenant, sandbox ISV), else placeholders. */
import type { DataSource } from 'typeorm';
import { Grant, Isv, Tenant } from '../../entities';
import { SANDBOX_ISV_NAME, SANDBOX_TENANTS } from '../sandbox/sandbox.definition';
import { PLACEHOLDER_IDS, type ExampleIds } from './examples';

export async function sandboxExampleIds(ds: DataSource | null): Promise<ExampleIds> {
  if (!ds) return PLACEHOLDER_IDS;
  const [tenant, isv] = await Promise.all([
    ds.getRepository(Tenant).findOneBy({ slug: SANDBOX_TENANTS[0]!.slug }),
    ds.getRepository(Isv).findOneBy({ name: SANDBOX_ISV_NAME }),
  ]);
  // The ISV's grants as they stand: the set_grants example re-states them, so trying it changes nothing.
  const grants = tenant && isv ? await ds.getRepository(Grant).find({ where: { tenantId: tenant.id, isvId: isv.id }, order: { connectionId: 'ASC' } }) : [];
  return {
    tenantId: tenant?.id ?? PLACEHOLDER_IDS.tenantId,
    isvId: isv?.id ?? PLACEHOLDER_IDS.isvId,
    grants: grants.length ? grants.map((g) => ({ connection_id: g.connectionId, keys: g.keys })) : PLACEHOLDER_IDS.grants,
  };
}
