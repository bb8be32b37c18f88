/**
 * Every answer a test receives from a documented path is held against the OpenAPI document the
 * service serves: the status must be documented for that path and method, and the body must match
 * its schema (an empty body for 204). An undocumented status or shape fails the test that saw it.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }>; 'x-fields-schema'?: unknown }> }>>; components: unknown };

interface Route { template: string; regex: RegExp; params: number }

export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction | null>();
  /** Every (operation, status) a test saw: the parity and coverage tests read it. */
  readonly seen = new Set<string>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.routes = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      params: (template.match(/\{/g) ?? []).length,
    })).sort((a, b) => a.params - b.params);
  }

  /** The documented path template of a request path, or null for paths outside the API (simulators, docs). */
  route(pathname: string): string | null {
    return this.routes.find((r) => r.regex.test(pathname))?.template ?? null;
  }

  /** `narrowed`: the request sent `fields=`, so its answer is held against the response's x-fields-schema where it has one. */
  private validator(template: string, method: string, status: string, narrowed = false): ValidateFunction | null | undefined {
    const key = `${method} ${template} ${status}${narrowed ? ' fields' : ''}`;
    if (this.validators.has(key)) return this.validators.get(key);
    const response = this.doc.paths[template]?.[method]?.responses?.[status];
    if (!response) return undefined;
    const schema = (narrowed ? response['x-fields-schema'] : undefined) ?? response.content?.['application/json']?.schema;
    const v = schema ? this.ajv.compile({ ...(schema as object), components: this.doc.components }) : null;
    this.validators.set(key, v);
    return v;
  }

  /** Null when the answer is documented; otherwise what is wrong with it (a text/csv answer must be documented as such). */
  check(method: string, url: string, status: number, text: string, contentType?: string | null): string | null {
    const { pathname, searchParams } = new URL(url);
    const template = this.route(pathname);
    if (!template) return null;
    const m = method.toLowerCase();
    const op = this.doc.paths[template][m];
    if (!op) {
      // A method the path does not take: an Error envelope is all we promise.
      return this.checkBody(this.validatorForError(), text, `${method} ${pathname} (undocumented method) ${status}`);
    }
    this.seen.add(`${m} ${template} ${status}`);
    if (contentType?.startsWith('text/csv')) {
      return op.responses?.[String(status)]?.content?.['text/csv'] ? null : `${method} ${template} ${status} answered CSV, which its OpenAPI entry does not document`;
    }
    const v = this.validator(template, m, String(status), searchParams.has('fields'));
    if (v === undefined) return `${method} ${template} answered ${status}, which its OpenAPI entry does not document: ${text.slice(0, 300)}`;
    if (v === null) return text === '' ? null : `${method} ${template} ${status} must have no body, got: ${text.slice(0, 200)}`;
    return this.checkBody(v, text, `${method} ${template} ${status}`);
  }

  private errorValidator: ValidateFunction | undefined;
  private validatorForError(): ValidateFunction {
    this.errorValidator ??= this.ajv.compile({ $ref: '#/components/schemas/Error', components: this.doc.components });
    return this.errorValidator;
  }

  private checkBody(v: ValidateFunction, text: string, what: string): string | null {
    let body: unknown;
    try { body = JSON.parse(text); } catch { return `${what}: the body is not JSON: ${text.slice(0, 200)}`; }
    if (v(body)) return null;
    return `${what}: the body does not match its OpenAPI schema: ${this.ajv.errorsText(v.errors?.slice(0, 5))}\n${text.slice(0, 500)}`;
  }
}
