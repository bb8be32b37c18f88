/**
 * The members page of both consoles (docs/architecture.md, People): the members and pending invitations of
 * the session's organisation; for an owner, forms to invite, change a role and remove; for everyone, leave
 * (the last owner cannot). The rules are PeopleService's; this module shows them and reads the forms.
 */
import { field, type FormFields } from '../pages/forms';
import { html, type SafeHtml } from '../pages/html';
import { notice } from '../pages/notice';
import { ServiceError } from '../errors/service-error';
import { managesMembers, type PeopleService } from './people.service';
import { sessionCsrfField } from './people-ui';
import { ROLES, type Organisation } from './people.types';
import type { PersonSession } from './sessions';

export type MembersAction = 'invite' | 'role' | 'remove';
export const MEMBERS_ACTIONS: readonly MembersAction[] = ['invite', 'role', 'remove'];

/** The page's main content; `base` is where its forms post (`/console/members` or `/app/members`). */
export async function membersView(people: PeopleService, org: Organisation, session: PersonSession, base: string, message?: SafeHtml): Promise<SafeHtml> {
  const [members, invitations] = await Promise.all([people.members(org), people.pendingInvitations(org)]);
  const owner = managesMembers(session.role);
  const roles = ROLES[org.kind];
  const roleSelect = (id: string, current: string) => html`<select id="${id}" name="role">${roles.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${r}</option>`)}</select>`;
  return html`<h1>Members</h1>${message ?? ''}
<p class="lead">${owner ? 'You are an owner: you invite colleagues, change roles and remove members.' : `You are ${session.role ?? 'signed in without a membership'} here; an owner manages members.`}</p>
<div class="table-wrap"><table><caption class="visually-hidden">Members</caption><thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Actions</th></tr></thead><tbody>
${members.map((m, i) => {
    const self = m.id === session.personId;
    return html`<tr><td>${m.email}${self ? html` <span class="badge">you</span>` : ''}</td><td>${m.name}</td><td>${m.role}</td><td>
${owner ? html`<form method="post" action="${base}/role" class="row">${sessionCsrfField(session)}<input type="hidden" name="person_id" value="${m.id}"><label class="visually-hidden" for="role-${i}">Role of ${m.email}</label>${roleSelect(`role-${i}`, m.role)}<button type="submit" class="secondary">Change role</button></form>` : ''}
${owner || self ? html`<form method="post" action="${base}/remove">${sessionCsrfField(session)}<input type="hidden" name="person_id" value="${m.id}"><button type="submit" class="danger">${self ? 'Leave' : html`Remove <span class="visually-hidden">${m.email}</span>`}</button></form>` : ''}
</td></tr>`;
  })}
</tbody></table></div>
${invitations.length ? html`<h2>Invitations not accepted yet</h2><ul>${invitations.map((i) => html`<li>${i.email} as ${i.role}, until ${i.expiresAt.toISOString().slice(0, 10)}</li>`)}</ul>` : ''}
${owner ? html`<h2>Invite a colleague</h2><form method="post" action="${base}/invite" class="stack card">${sessionCsrfField(session)}
<div><label for="invite_email">Email</label><input id="invite_email" name="email" type="email" required maxlength="254" autocomplete="off"></div>
<div><label for="invite_role">Role</label>${roleSelect('invite_role', roles[roles.length - 1]!)}</div>
<button type="submit">Send the invitation</button></form>` : ''}
<h2>Your sessions</h2><form method="post" action="/sign-out/everywhere">${sessionCsrfField(session)}<button type="submit" class="secondary">Sign out everywhere</button></form>`;
}

/** Applies one members form; what to tell the person. A refusal is a ServiceError (shown by the caller). */
export async function applyMembersForm(
  people: PeopleService, action: MembersAction, form: FormFields, org: Organisation, session: PersonSession,
  audit: (action: string, detail: Record<string, unknown>) => Promise<void>,
): Promise<{ message: SafeHtml; left: boolean }> {
  const actor = { personId: session.personId, role: session.role };
  if (action === 'invite') {
    // A session that names no person (the sandbox's MSP key) invites no one: an owner does.
    if (!session.person) throw new ServiceError('role_required', 'Only an owner, signed in as a person, invites members.', { details: { role: 'owner' } });
    const by = { kind: 'person' as const, id: session.person.id, email: session.person.email };
    const inv = await people.invite(org, field(form, 'email'), field(form, 'role'), by, session.role);
    await audit('member.invite', { email: inv.email, role: inv.role });
    return { message: notice('ok', `Invitation mailed to ${inv.email} (${inv.role}); it works once, for 7 days.`), left: false };
  }
  const personId = field(form, 'person_id');
  if (action === 'role') {
    const role = field(form, 'role');
    await people.changeMember(org, personId, role, actor);
    await audit('member.role', { person_id: personId, role });
    return { message: notice('ok', `Role changed to ${role}.`), left: false };
  }
  await people.changeMember(org, personId, null, actor);
  await audit('member.remove', { person_id: personId });
  return { message: notice('ok', 'Member removed.'), left: personId === session.personId };
}
