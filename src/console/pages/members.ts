/** The tenant's members (docs/architecture.md, People): the shared members page, audited in the tenant's log with the person as actor. */
import { applyMembersForm, MEMBERS_ACTIONS, membersView, type MembersAction } from '../../people/members-page';
import type { ConsoleDeps } from '../console-deps';
import type { ConsoleRoutes } from '../page-context';

export function registerMembers(routes: ConsoleRoutes, deps: Pick<ConsoleDeps, 'people' | 'audit'>): void {
  const BASE = '/console/members';
  routes.get(BASE, async (ctx) => {
    ctx.send(BASE, 'Members', await membersView(deps.people, ctx.session.organisation!, ctx.session, BASE));
  });
  for (const action of MEMBERS_ACTIONS) {
    routes.post(`${BASE}/${action}`, async (ctx) => {
      const done = await applyMembersForm(deps.people, action as MembersAction, ctx.form, ctx.session.organisation!, ctx.session,
        (what, detail) => deps.audit(ctx.session, what, detail));
      if (done.left) {
        ctx.res.redirect(303, '/sign-in/choose');
        return;
      }
      ctx.send(BASE, 'Members', await membersView(deps.people, ctx.session.organisation!, ctx.session, BASE, done.message));
    });
  }
}
