/**
 * The markup of single sign-on (docs/architecture.md, Single sign-on) on the page kit: the sign-in
 * section both consoles' sign-in pages show, the step pages of the flow, and the owner's settings page.
 * Nothing here decides anything; values are escaped by the `html` template.
 */
import { html, type SafeHtml } from '../../pages/html';
import { renderPage } from '../../pages/layout';
import { plainPage, sessionCsrfField, signInCsrfField, AREA_TITLE, type ConsoleArea } from '../people-ui';
import { notice } from '../../pages/notice';
import type { SignInPageContext } from '../sign-in-extensions';
import type { SsoSettingsView } from './sso-settings';

/** The page script that follows a page's "Continue" link at once (the link works without it). */
export const FOLLOW_SCRIPT = `(function () {
  var a = document.querySelector('a[data-follow]');
  if (a) window.location.assign(a.href);
})();
`;

export const SETTINGS_PATH: Record<ConsoleArea, string> = { console: '/console/settings/sso', app: '/app/settings/sso' };

/** The section of the sign-in page: an email, then the organisation's identity provider. */
export function signInSection(ctx: SignInPageContext): SafeHtml {
  return html`<section class="card stack" aria-labelledby="sso-heading"><h2 id="sso-heading">Sign in with single sign-on</h2>
<form class="stack" method="post" action="/sign-in/sso">${signInCsrfField(ctx.formToken)}<input type="hidden" name="area" value="${ctx.area}">
<div><label for="sso_email">Work email</label><p class="hint" id="sso_email_hint">If your organisation signs in through its identity provider (Microsoft Entra ID, Google Workspace, Okta, ...), you continue there.</p>
<input id="sso_email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="sso_email_hint"></div>
<button type="submit">Sign in with single sign-on</button></form></section>`;
}

/** A page that sends the browser on by a link, followed at once by the page script where it runs. */
export function continuePage(title: string, lead: SafeHtml, href: string, label: string, script: string, area: ConsoleArea): string {
  return renderPage({
    title, area: AREA_TITLE[area], scripts: [script],
    main: html`<h1>${title}</h1><p class="lead">${lead}</p><p><a class="button" href="${href}" data-follow>${label}</a></p>`,
  });
}

export function refusalPage(title: string, message: SafeHtml | string, area: ConsoleArea): string {
  return plainPage(title, html`<h1>${title}</h1>${notice('bad', message)}<p><a href="/sign-in?area=${area}">Back to sign-in</a></p>`, area);
}

export interface SettingsPageModel {
  area: ConsoleArea;
  orgName: string;
  csrfToken: string;
  callbackUrl: string;
  view: SsoSettingsView | null;
  /** What was typed, shown again after a refusal (never the secret). */
  typed?: { issuer: string; clientId: string; domains: string; requireSso: boolean; allowJoin: boolean };
  message?: SafeHtml;
}

export function settingsPage(m: SettingsPageModel): string {
  const v = m.typed ?? (m.view
    ? { issuer: m.view.issuer, clientId: m.view.clientId, domains: m.view.domains.join('\n'), requireSso: m.view.requireSso, allowJoin: m.view.allowJoin }
    : { issuer: '', clientId: '', domains: '', requireSso: false, allowJoin: false });
  const session = { csrfToken: m.csrfToken };
  const home = m.area === 'app' ? '/app' : '/console';
  return renderPage({
    title: 'Single sign-on', area: AREA_TITLE[m.area],
    nav: [{ href: home, label: 'Back to the console' }, { href: SETTINGS_PATH[m.area], label: 'Single sign-on', current: true }],
    aside: html`<span>${m.orgName}</span> <form method="post" action="/sign-out">${sessionCsrfField(session)}<button type="submit" class="link">Sign out</button></form>`,
    main: html`<h1>Single sign-on</h1>
${m.message ?? ''}
<p class="lead">People of ${m.orgName} whose email is in the domains below sign in through your identity provider by OpenID Connect (Microsoft Entra ID, Google Workspace, Okta and others). Register this redirect URI in the provider's application:</p>
<p><code>${m.callbackUrl}</code></p>
<p class="muted">${m.view ? `On: ${m.view.domains.join(', ')}. Last changed ${m.view.updatedAt.toISOString()}.` : 'Off: nobody signs in through an identity provider yet.'}</p>
<form class="stack card" method="post" action="${SETTINGS_PATH[m.area]}">${sessionCsrfField(session)}
<div><label for="issuer">Issuer URL</label><p class="hint" id="issuer_hint">The provider's issuer, e.g. https://login.microsoftonline.com/&lt;tenant id&gt;/v2.0, https://accounts.google.com or https://&lt;your org&gt;.okta.com. Its discovery document is read when you save.</p>
<input id="issuer" name="issuer" type="url" required maxlength="2000" value="${v.issuer}" aria-describedby="issuer_hint"></div>
<div><label for="client_id">Client id</label><input id="client_id" name="client_id" type="text" required maxlength="255" autocomplete="off" value="${v.clientId}"></div>
<div><label for="client_secret">Client secret</label><p class="hint" id="client_secret_hint">${m.view ? 'Stored encrypted and never shown again. Leave empty to keep the stored one.' : 'Stored encrypted and never shown again.'}</p>
<input id="client_secret" name="client_secret" type="password" autocomplete="off" maxlength="1024" ${m.view ? '' : html`required`} aria-describedby="client_secret_hint"></div>
<div><label for="domains">Email domains</label><p class="hint" id="domains_hint">One per line, e.g. acme.com. Only these exact domains are covered (a subdomain is listed on its own).</p>
<textarea id="domains" name="domains" rows="3" required aria-describedby="domains_hint">${v.domains}</textarea></div>
<label class="check" for="require_sso"><input id="require_sso" name="require_sso" type="checkbox" value="on"${v.requireSso ? html` checked` : ''}> <span>Require single sign-on for these domains<span class="hint">No emailed sign-in links for them: people sign in through the provider only.</span></span></label>
<label class="check" for="allow_join"><input id="allow_join" name="allow_join" type="checkbox" value="on"${v.allowJoin ? html` checked` : ''}> <span>Let new people from these domains join as viewers<span class="hint">Otherwise someone without a membership needs an invitation.</span></span></label>
<button type="submit">Save single sign-on</button></form>
${m.view ? html`<form class="stack" method="post" action="${SETTINGS_PATH[m.area]}/remove">${sessionCsrfField(session)}<button type="submit" class="secondary">Turn single sign-on off</button></form>` : ''}`,
  });
}
