import { escapeHtml, html, trusted } from './html';
import { renderPage } from './layout';
import { contentSecurityPolicy } from './page-headers';

describe('page kit', () => {
  it('escapes every interpolated value, including attribute quotes', () => {
    const name = `<script>alert("x")</script>' onmouseover='x`;
    const out = html`<p title="${name}">${name}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain(`' onmouseover`);
    expect(out).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x');
  });

  it('joins arrays, keeps trusted markup and renders nothing for null, undefined and false', () => {
    expect(html`<ul>${['a<', 'b'].map((s) => html`<li>${s}</li>`)}</ul>${null}${undefined}${false}${trusted('<hr>')}`.value)
      .toBe('<ul><li>a&lt;</li><li>b</li></ul><hr>');
    expect(escapeHtml('&')).toBe('&amp;');
  });

  it('renders a shell with a skip link, a main landmark and no inline script', () => {
    const page = renderPage({ title: 'T<', area: 'Console', main: html`<h1>x</h1>`, scripts: ['/assets/a.js'], nav: [{ href: '/a', label: 'A', current: true }] });
    expect(page).toContain('<a class="skip" href="#main">');
    expect(page).toContain('<main id="main"');
    expect(page).toContain('<title>T&lt; · Console</title>');
    expect(page).toContain('aria-current="page"');
    expect(page).not.toMatch(/<script>(?!<\/)/);
  });

  it('allows only our own origin, and a named form target, in the CSP', () => {
    const csp = contentSecurityPolicy({ formActions: ['https://login.vendor.example'] });
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://login.vendor.example");
    expect(csp).not.toContain('unsafe-inline');
  });
});
