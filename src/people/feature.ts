/**
 * People (docs/architecture.md, People): the operator's `invite_member` (admin token, GraphQL only), and
 * the pages every person signs in through: /sign-in, /invitations, /sign-out, and the sandbox's /dev/outbox.
 * Both consoles (/console, src/console; /app, src/isv-console) use the same sessions.
 */
import type { AppConfig } from '../config/config';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing } from '../operations/operation';
import type { OutboxStore } from './outbox.store';
import type { PeopleService } from './people.service';
import * as S from './people.schemas';
import type { PeopleSessions } from './sessions';
import { signInRouter } from './sign-in.router';

export interface PeopleServices {
  people: PeopleService;
}
const defineOperation = operationsUsing<PeopleServices>();

const inviteMember = defineOperation({
  name: 'invite_member', kind: 'mutation', tag: 'Admin', role: 'admin', flattenBody: true,
  summary: "Invite a person into an ISV or a tenant (an ISV's first owner)",
  description: 'Mails an invitation link (32 random bytes, stored hashed, valid 7 days, single use) that makes the person a member with `role` once accepted. There is no public sign-up: the operator invites an ISV\'s first owner, owners invite the rest from the console.',
  body: S.InviteMemberBody,
  responses: [{ status: 200, schema: S.InvitationSent, description: 'The invitation was mailed.' }],
  errors: ['request_invalid'],
  handle: async ({ body }, { services }) =>
    services.people.invite({ kind: body.organisation_kind, id: body.organisation_id }, body.email, body.role, { kind: 'operator', id: 'graph' }, null),
});

export const peopleFeature: FeatureModule<PeopleServices> = {
  name: 'people',
  operations: [inviteMember],
};

export interface PeoplePagesServices extends PeopleServices {
  peopleSessions: PeopleSessions;
  outbox: OutboxStore;
  config: Pick<AppConfig, 'sandboxEnabled'>;
}

/** The pages people sign in through (the consoles, src/console and src/isv-console, use their sessions). */
export const peoplePagesFeature: FeatureModule<PeoplePagesServices> = {
  name: 'people-pages',
  mount(app, services) {
    app.use(signInRouter({ people: services.people, sessions: services.peopleSessions, outbox: services.config.sandboxEnabled ? services.outbox : null }));
  },
};
