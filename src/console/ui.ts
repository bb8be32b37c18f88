/**
 * The console's pieces of markup on top of the page kit (src/pages): its shell with navigation and
 * sign-out, the CSRF field every form carries, notices, and how a refusal of an operation is told to
 * the person (its message, never a stack). Nothing here decides anything: the pages show what the
 * operations answered (docs/architecture.md, Connect sessions and console).
 */
import { RequestValidationError } from '../errors/request-validation-error';
import { ServiceError } from '../errors/service-error';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import type { PersonSession } from '../people/sessions';

export const CONSOLE_PAGES = [
  { path: '/console/health', label: 'Health' },
  { path: '/console/grants', label: 'Grants' },
  { path: '/console/identity', label: 'Identity' },
  { path: '/console/charges', label: 'Charges' },
  { path: '/console/reconciliation', label: 'Reconciliation' },
  { path: '/console/audit', label: 'Audit log' },
  { path: '/console/key', label: 'MSP key' },
  { path: '/console/members', label: 'Members' },
  { path: '/console/settings/sso', label: 'Single sign-on' },
] as const;

export interface Signed {
  session: PersonSession;
  tenantName: string;
}

/** The hidden CSRF field of every form a signed-in page shows. */
export function csrfField(session: { csrfToken: string }): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
}

/** A signed-in page: navigation, who is signed in, sign-out. */
export function consolePage(s: Signed, current: string, title: string, main: SafeHtml, scripts: string[] = []): string {
  return renderPage({
    title, area: 'Console', scripts,
    nav: [
      ...CONSOLE_PAGES.map((p) => ({ href: p.path, label: p.label, current: p.path === current })),
      // A person may belong to several organisations; a session opens one at a time.
      ...(s.session.person ? [{ href: '/sign-in/choose', label: 'Switch organisation' }] : []),
    ],
    aside: html`<span>${s.tenantName}${s.session.person ? html` · ${s.session.person.email}` : ''}</span> <form method="post" action="/console/sign-out">${csrfField(s.session)}<button type="submit" class="link">Sign out</button></form>`,
    main,
  });
}

/** A page for someone not signed in (sign-in, a spent link). */
export function publicPage(title: string, main: SafeHtml): string {
  return renderPage({ title, area: 'Console', main });
}

/** What a refused operation tells the person: its code and message, or each field problem. */
export function refusal(err: unknown): { status: number; message: SafeHtml } | null {
  if (err instanceof ServiceError) {
    return { status: err.status, message: html`<strong>${err.code}</strong>: ${err.message}` };
  }
  if (err instanceof RequestValidationError) {
    return { status: 422, message: html`<strong>Not accepted</strong>: <ul>${err.detail.map((d) => html`<li>${d.loc.join('.')}: ${d.msg}</li>`)}</ul>` };
  }
  return null;
}

export function money(n: number | null | undefined): string {
  return n == null ? '' : n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

export function qty(n: number | null | undefined): string {
  return n == null ? '—' : String(Math.round(n * 1000) / 1000);
}

/** "5 minutes ago", for a person reading a status (times are shown in full beside it). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 90) return s === 1 ? '1 second ago' : `${s} seconds ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} minutes ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} hours ago`;
  return `${Math.round(s / 86400)} days ago`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds == null) return 'never synced';
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 360) / 10} h`;
}
