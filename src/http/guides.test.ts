import { ERROR_CODES } from '../errors/error-codes';
import { ERROR_GUIDES } from './error-guides';
import { GUIDES, guidePages, renderGuideMarkdown, slugOf } from './guides';

/** The ids of a rendered page, and the local links it holds. */
const idsOf = (page: string) => new Set([...page.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));
const linksOf = (page: string) => [...page.matchAll(/href="(\/docs[^"]*)"/g)].map((m) => m[1]!);

describe('the guides', () => {
  const pages = guidePages();

  it('markup written in a guide is escaped and a script link is not a link', () => {
    const out = renderGuideMarkdown('# Hi\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>').value;
    expect(out).not.toMatch(/<script|<img|href="javascript/i);
    expect(out).toContain('&lt;script&gt;');
    expect(out).toContain('<h1 id="hi">');
  });

  it('a code block is a focusable, named region', () => {
    expect(renderGuideMarkdown('```sh\ncurl x\n```').value).toMatch(/^<pre class="request guide" tabindex="0" aria-label="sh example"><code class="language-sh">/);
  });

  it('has every guide the index lists, each with one h1', () => {
    for (const g of GUIDES) expect(pages.get(g.slug)?.match(/<h1 /g)).toHaveLength(1);
    for (const g of GUIDES) expect(pages.get('index')).toContain(`href="/docs/guides/${g.slug}"`);
  });

  it('every link of a guide to a guide section names a section that exists', () => {
    const broken: string[] = [];
    for (const [slug, page] of pages) {
      for (const link of linksOf(page)) {
        const [where, anchor] = link.split('#');
        const target = where!.startsWith('/docs/guides/') ? pages.get(where!.slice('/docs/guides/'.length)) : where === '/docs/guides' ? pages.get('index') : null;
        if (where!.startsWith('/docs/guides') && (!target || (anchor && !idsOf(target).has(anchor)))) broken.push(`${slug}: ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every error code names a guide section that exists', () => {
    const missing = Object.keys(ERROR_CODES).filter((code) => {
      const [where, anchor] = ERROR_GUIDES[code as keyof typeof ERROR_GUIDES].split('#');
      const page = pages.get(where!.slice('/docs/guides/'.length));
      return !page || !idsOf(page).has(anchor!);
    });
    expect(missing).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slugOf('Polling for changes with `after`')).toBe('polling-for-changes-with-after');
    expect(slugOf('The error envelope')).toBe('the-error-envelope');
  });
});
