/**
 * Server-rendered HTML for the pages the service serves itself (the connect page, the MSP's console):
 * a tagged template that escapes every interpolated value unless it is already `SafeHtml`, so a vendor
 * name, a company name or an error message can never become markup (docs/architecture.md, Pages).
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** html`<p>${name}</p>`: values escaped, arrays joined, null/undefined/false render nothing. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup that is already safe (a constant of ours); never pass anything a caller or vendor sent. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
