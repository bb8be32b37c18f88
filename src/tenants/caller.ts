/** Who is calling: an ISV through one of its API keys, or internal tooling with the admin token. */
export type Caller = { kind: 'isv'; isvId: string; apiKeyId: string } | { kind: 'admin' };

export const GRANT_KEYS = [
  'psa.ticket.create', 'psa.ticket.update', 'psa.ticket.events', 'rmm.device.events', 'psa.company.events',
  'psa.company.create',
  // Ours (design.md section 3), each off until the MSP turns it on.
  'rmm.device.write', 'psa.ticket.auto_close', 'psa.time.create', 'psa.agreement.write', 'psa.project.write',
  'distributor.company.create',
] as const;
export type GrantKey = (typeof GRANT_KEYS)[number];
