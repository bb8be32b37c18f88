/** The sandbox's rows the /openapi.json examples name (example-ids.ts shapes them into ids). */
import type { DataSource } from 'typeorm';
import { Grant, Isv, Tenant } from '../../entities';
import { SANDBOX_ISV_NAME, SANDBOX_TENANTS } from '../sandbox/sandbox.definition';

type Row = Record<string, any>;

/** The sandbox's rows the examples name (the alpha tenant's, the sandbox ISV's); null without the sandbox. */
export async function sandboxExampleRows(ds: DataSource) {
  const [tenant, isv] = await Promise.all([
    ds.getRepository(Tenant).findOneBy({ slug: SANDBOX_TENANTS[0]!.slug }),
    ds.getRepository(Isv).findOneBy({ name: SANDBOX_ISV_NAME }),
  ]);
  if (!tenant || !isv) return null;
  const first = async (sql: string, args: unknown[] = [tenant.id, isv.id]): Promise<Row | null> => ((await ds.query(sql, args)) as Row[])[0] ?? null;
  const all = async (sql: string, args: unknown[] = [tenant.id, isv.id]): Promise<Row[]> => ds.query(sql, args);
  const [grants, event, link, finding, charge, mapping, application, webhook, routing, book, match, unmatched, skipped, member] = await Promise.all([
    // The ISV's grants as they stand: the set_grants example re-states them, so trying it changes nothing.
    ds.getRepository(Grant).find({ where: { tenantId: tenant.id, isvId: isv.id }, order: { connectionId: 'ASC' } }),
    // The feed's first event: `after` it, the page shows the ones that follow.
    first('SELECT id FROM events WHERE tenant_id = $1 ORDER BY seq LIMIT 1', [tenant.id]),
    first('SELECT ticket_ref FROM ticket_links WHERE tenant_id = $1 AND isv_id = $2 ORDER BY created_at DESC, id LIMIT 1'),
    first('SELECT finding_id FROM ticket_links WHERE tenant_id = $1 AND isv_id = $2 AND finding_id IS NOT NULL ORDER BY created_at DESC, id LIMIT 1'),
    first("SELECT id FROM charges WHERE tenant_id = $1 AND status = 'pending' ORDER BY created_at, id LIMIT 1", [tenant.id]),
    first("SELECT id, vendor_product_ref, agreement_source_id, line_source_id FROM agreement_line_mappings WHERE tenant_id = $1 AND isv_id = $2 AND status = 'mapped' ORDER BY created_at, id LIMIT 1"),
    first('SELECT id FROM installed_applications WHERE tenant_id = $1 ORDER BY id LIMIT 1', [tenant.id]),
    first('SELECT id FROM webhooks WHERE tenant_id = $1 AND isv_id = $2 ORDER BY created_at, id LIMIT 1'),
    first('SELECT overrides FROM routing_configs WHERE tenant_id = $1 AND isv_id = $2'),
    all('SELECT ref, name, domain FROM isv_customers WHERE tenant_id = $1 AND isv_id = $2 ORDER BY ref'),
    first('SELECT customer_ref, company_source_id FROM identity_matches WHERE tenant_id = $1 AND isv_id = $2 ORDER BY customer_ref LIMIT 1'),
    // A customer that needs a match: unsetting it changes nothing.
    first(`SELECT c.ref FROM isv_customers c WHERE c.tenant_id = $1 AND c.isv_id = $2
             AND NOT EXISTS (SELECT 1 FROM identity_matches m WHERE m.tenant_id = c.tenant_id AND m.isv_id = c.isv_id AND m.customer_ref = c.ref)
             AND NOT EXISTS (SELECT 1 FROM identity_skips s WHERE s.tenant_id = c.tenant_id AND s.isv_id = c.isv_id AND s.side = 'isv_customer' AND s.subject = c.ref)
           ORDER BY c.ref LIMIT 1`),
    // A customer set aside already: skipping it again changes nothing.
    first("SELECT subject FROM identity_skips WHERE tenant_id = $1 AND isv_id = $2 AND side = 'isv_customer' ORDER BY subject LIMIT 1"),
    // An active member where the newest linked ticket is: time on it names who did the work.
    first(`SELECT m.member_ref FROM ticket_links l JOIN members m ON m.connection_id = l.connection_id AND m.active IS NOT FALSE
            WHERE l.tenant_id = $1 AND l.isv_id = $2 ORDER BY l.created_at DESC, l.id, m.member_ref LIMIT 1`),
  ]);
  return { tenant, isv, grants, event, link, finding, charge, mapping, application, webhook, routing, book, match, unmatched, skipped, member };
}
