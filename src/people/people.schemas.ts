/** The graph's people operations (docs/architecture.md, People): the operator's invitation. */
import { text, z } from '../shared/request';

export const InviteMemberBody = z.object({
  organisation_kind: z.enum(['isv', 'tenant']).openapi({ description: 'An ISV (roles owner, developer, viewer) or a tenant, the MSP (roles owner, admin, viewer).' }),
  organisation_id: z.string().uuid(),
  email: text(254).min(3),
  role: z.enum(['owner', 'admin', 'developer', 'viewer']).default('owner'),
}).strict().openapi('InviteMemberBody');

export const InvitationSent = z.object({
  email: z.string(), role: z.string(), expires_at: z.string(),
}).strict().openapi('InvitationSent');
