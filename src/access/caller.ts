/**
 * Who is calling. Three kinds (design.md section 3): an ISV through one of its API keys, an MSP through
 * its tenant's own key (`sk_msp_...`), or internal tooling with the admin token (GraphQL only).
 */
export type Caller =
  | { kind: 'isv'; isvId: string; apiKeyId: string }
  | { kind: 'msp'; tenantId: string; apiKeyId: string }
  | { kind: 'admin' };

export type CallerKind = Caller['kind'];

export const GRANT_KEYS = [
  'psa.ticket.create', 'psa.ticket.update', 'psa.ticket.events', 'rmm.device.events', 'psa.company.events',
  'psa.company.create',
  // Ours (design.md section 3), each off until the MSP turns it on.
  'rmm.device.write', 'psa.ticket.auto_close', 'psa.time.create', 'psa.agreement.write', 'psa.project.write',
  'distributor.company.create', 'billing.cost.submit',
] as const;
export type GrantKey = (typeof GRANT_KEYS)[number];

export function isGrantKey(value: string): value is GrantKey {
  return (GRANT_KEYS as readonly string[]).includes(value);
}
