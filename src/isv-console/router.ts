/**
 * The ISV's console at /app (docs/architecture.md, People; design of the console: the ISV's console and
 * its API twins). A request without a session bound to an ISV gets the sign-in page or the organisation
 * chooser, nothing else. Each page is a module listed in ./pages.ts.
 */
import express, { type Router } from 'express';
import { pageHeaders } from '../pages/page-headers';
import type { PeopleSessions } from '../people/sessions';
import { ISV_CONSOLE_PAGES } from './pages';
import { isvConsoleShell, type IsvConsoleServices } from './shell';

export function isvConsoleRouter(services: IsvConsoleServices, sessions: PeopleSessions): Router {
  const router = express.Router();
  router.use('/app', pageHeaders());
  const nav = () => [
    ...ISV_CONSOLE_PAGES.flatMap((p) => (p.nav ? [p.nav] : [])),
    { href: '/sign-in/choose', label: 'Switch organisation' },
  ];
  const shell = isvConsoleShell(services, sessions, nav);
  for (const page of ISV_CONSOLE_PAGES) page.register(router, shell);
  return router;
}
