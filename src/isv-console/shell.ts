/**
 * What every page of the ISV's console shares: the signed-in check (a session bound to an ISV, or the
 * sign-in page / organisation chooser already sent), the page shell with its navigation, and the list of
 * page modules (src/isv-console/pages.ts). A page module registers its own routes on the /app router.
 */
import type { Request, Response, Router } from 'express';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import { refusedPage, sendSignInPage, sessionCsrfField } from '../people/people-ui';
import { CONSOLE_OF, type Organisation } from '../people/people.types';
import type { PeopleSessions, PersonSession } from '../people/sessions';
import type { AccessService } from '../access/access.service';
import type { AppConfig } from '../config/config';
import type { ConnectionStates } from '../events/connection-states.store';
import type { RunnerServices } from '../operations/runner';
import type { Mailer } from '../people/mailer';
import type { PeopleService } from '../people/people.service';
import type { PeopleStore } from '../people/people.store';
import type { RequestLogService } from '../requests/requests.service';
import type { IsvKeys } from '../tenants/isv-keys.service';
import type { WebhooksService } from '../webhooks/webhooks.service';
import type { Logger } from 'pino';

/**
 * What the console's pages use of the service graph, besides running operations by name (the runner
 * hands the graph on to each operation, whole).
 */
export interface IsvConsoleServices extends RunnerServices {
  access: AccessService;
  config: AppConfig;
  connectionStates: ConnectionStates;
  isvKeys: IsvKeys;
  logger: Logger;
  mailer: Mailer;
  people: PeopleService;
  peopleSessions: PeopleSessions;
  peopleStore: PeopleStore;
  requestLog: RequestLogService;
  webhooks: WebhooksService;
}

/** The signed-in person at an ISV: the session, its ISV (organisation) and the ISV's name. */
export interface SignedIsv {
  session: PersonSession;
  org: Organisation;
  name: string;
}

export interface IsvConsoleShell {
  /** The services a page module takes what it needs from. */
  services: IsvConsoleServices;
  /** The session bound to an ISV, or null with an answer already sent (sign-in page, or the chooser). */
  signed(req: Request, res: Response): Promise<SignedIsv | null>;
  /** A whole page: the shell with the navigation, `current` marked; `scripts` under /assets (e.g. COPY_SCRIPT). */
  page(who: SignedIsv, current: string, title: string, main: SafeHtml, scripts?: string[]): string;
  /** A form's CSRF field for this session; a post is taken through `signedForm`, which checks it. */
  csrfField(who: SignedIsv): SafeHtml;
  /** A form post: `signed`, and its `csrf` field this session's; null with the refusal already sent. */
  signedForm(req: Request, res: Response): Promise<SignedIsv | null>;
}

/** A page of the console: its place in the navigation and the routes it adds. */
export interface IsvConsolePage {
  nav: { href: string; label: string } | null;
  register(router: Router, shell: IsvConsoleShell): void;
}

export function isvConsoleShell(services: IsvConsoleServices, sessions: PeopleSessions, nav: () => { href: string; label: string }[]): IsvConsoleShell {
  const page = (who: SignedIsv, current: string, title: string, main: SafeHtml, scripts: string[] = []): string =>
    renderPage({
      title, area: 'ISV console', main, scripts,
      nav: nav().map((p) => ({ ...p, current: p.href === current })),
      aside: html`<span>${who.name} · ${who.session.person?.email}</span> <form method="post" action="/sign-out">${sessionCsrfField(who.session)}<button type="submit" class="link">Sign out</button></form>`,
    });
  const signed = async (req: Request, res: Response): Promise<SignedIsv | null> => {
    const session = await sessions.current(req);
    if (!session) {
      sendSignInPage(req, res, sessions, { area: 'app', status: 401 });
      return null;
    }
    if (!session.organisation || CONSOLE_OF[session.organisation.kind] !== 'app' || !session.personId) {
      res.redirect(303, '/sign-in/choose');
      return null;
    }
    return { session, org: session.organisation, name: (await services.peopleStore.organisationName(session.organisation)) ?? '' };
  };
  return {
    services,
    page,
    csrfField: (who) => sessionCsrfField(who.session),
    async signedForm(req, res) {
      const who = await signed(req, res);
      if (!who) return null;
      const token = (req.body as Record<string, unknown> | undefined)?.csrf;
      if (!sessions.csrfAccepted(who.session, typeof token === 'string' ? token : '')) {
        refusedPage(res, 'app');
        return null;
      }
      return who;
    },
    signed,
  };
}
