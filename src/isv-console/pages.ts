/**
 * The pages of the ISV's console, in navigation order. Each page is a module of its own in this folder
 * (its routes, its view, its browser test beside the feature's other tests); adding a page is one line here.
 */
import type { IsvConsolePage } from './shell';
import { overviewPage, membersPage, ssoNavPage } from './overview-page';

export const ISV_CONSOLE_PAGES: IsvConsolePage[] = [
  overviewPage,
  membersPage,
  ssoNavPage,
];
