/**
 * The markup of people's pages (docs/architecture.md, People) on the page kit: the sign-in page of either
 * console (email form, other methods' sections, a page's own extra such as the sandbox's key form), the
 * CSRF fields, and the page shell of pages shown before a console is chosen.
 */
import type { Request, Response } from 'express';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import { notice } from '../pages/notice';
import type { PeopleSessions } from './sessions';
import { signInSections } from './sign-in-extensions';

export type ConsoleArea = 'console' | 'app';

export const AREA_TITLE: Record<ConsoleArea, string> = { console: 'MSP console', app: 'ISV console' };


/** A page of no console in particular (sign-in, the chooser, an invitation). */
export function plainPage(title: string, main: SafeHtml, area: ConsoleArea = 'console'): string {
  return renderPage({ title, area: AREA_TITLE[area], main });
}

/** The hidden CSRF field of a form shown before sign-in (the pre-session pair). */
export function signInCsrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

/** The hidden CSRF field of a signed-in session's form. */
export function sessionCsrfField(session: { csrfToken: string }): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
}

export function refusedPage(res: Response, area: ConsoleArea = 'console'): void {
  res.status(403).type('html').send(plainPage('Refused', html`<h1>Refused</h1>${notice('bad', 'This form did not come from a page of ours in this browser, so nothing was done. Open the sign-in page and try again.')}<p><a href="${area === 'app' ? '/app' : '/console'}">Sign-in page</a></p>`, area));
}

/** The sign-in page of a console: the magic-link form, then every other method registered, then `extra`. */
export function sendSignInPage(
  req: Request, res: Response, sessions: PeopleSessions,
  opts: { area: ConsoleArea; status?: number; message?: SafeHtml; extra?: (formToken: string) => SafeHtml },
): void {
  const token = sessions.signInFormToken(req, res);
  const { area } = opts;
  res.status(opts.status ?? 200).type('html').send(plainPage('Sign in', html`<h1>Sign in to the ${AREA_TITLE[area]}</h1>
${opts.message ?? ''}
<section class="card stack" aria-labelledby="email-heading"><h2 id="email-heading">Sign in with your email</h2>
<form class="stack" method="post" action="/sign-in/email">${signInCsrfField(token)}<input type="hidden" name="area" value="${area}">
<div><label for="email">Work email</label><p class="hint" id="email_hint">We mail you a link that signs you in once, within 15 minutes.</p>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="email_hint"></div>
<button type="submit">Mail me a sign-in link</button></form></section>
${signInSections({ formToken: token, area })}
${opts.extra?.(token) ?? ''}
<p class="muted">There is no public sign-up: an owner of your organisation invites you.</p>`, area));
}
