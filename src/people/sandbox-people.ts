/**
 * The sandbox's people (docs/architecture.md, People): an owner of the sandbox ISV
 * (owner@sandbox-isv.example) and one of each sandbox tenant (owner@<slug>.example, e.g.
 * owner@sandbox-alpha.example), so that anyone can try sign-in on `npm start` through /dev/outbox.
 * Idempotent: run at every start after the sandbox is ensured.
 */
import type { PeopleStore } from './people.store';

export const SANDBOX_ISV_OWNER = 'owner@sandbox-isv.example';
export const sandboxTenantOwner = (slug: string): string => `owner@${slug}.example`;

export async function seedSandboxPeople(store: PeopleStore, sandbox: { isvId: string; tenants: { id: string; slug: string }[] }): Promise<void> {
  const isvOwner = await store.ensurePerson(SANDBOX_ISV_OWNER, 'Sandbox ISV owner');
  await store.addMembership(isvOwner.id, { kind: 'isv', id: sandbox.isvId }, 'owner');
  for (const t of sandbox.tenants) {
    const owner = await store.ensurePerson(sandboxTenantOwner(t.slug), `${t.slug} owner`);
    await store.addMembership(owner.id, { kind: 'tenant', id: t.id }, 'owner');
  }
}
