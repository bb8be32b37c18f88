import { errorsPage, formatText } from './docs';

describe('/docs/errors text', () => {
  it('renders code spans and inline JSON as <code>, escaped, without raw backticks', () => {
    expect(formatText('the key is in `needed` and `details.needed`.')).toBe('the key is in <code>needed</code> and <code>details.needed</code>.');
    expect(formatText('answer 422: {"detail": [1]}.')).toBe('answer 422: <code>{&quot;detail&quot;: [1]}</code>.');
    expect(formatText('<script>`x`')).toBe('&lt;script&gt;<code>x</code>');
  });

  it('has no Markdown backticks left on the page', () => {
    const page = errorsPage();
    expect(page).not.toContain('`');
    expect(page).toContain('<code>needed</code>');
    expect(page).toContain('<code>{&quot;detail&quot;');
  });
});
