/**
 * The pages of the ISV's console, in navigation order. Each page is a module of its own in this folder
 * (its routes, its view, its browser test beside the feature's other tests); adding a page is one line here.
 */
import type { IsvConsolePage } from './shell';
import { overviewPage, membersPage, ssoNavPage } from './overview-page';
import { keysPage } from './keys-page';
import { mspsPage } from './msps-page';
import { connectLinksPage } from './connect-links-page';
import { requestsPage } from './requests-page';
import { webhooksPage } from './webhooks-page';

export const ISV_CONSOLE_PAGES: IsvConsolePage[] = [
  overviewPage,
  mspsPage,
  connectLinksPage,
  requestsPage,
  webhooksPage,
  membersPage,
  keysPage,
  ssoNavPage,
];
