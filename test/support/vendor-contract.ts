/**
 * The vendor request-contract check: every call a connector sends to a simulator is matched against the
 * vendor's own published API description (fixtures/vendor-api, sources in its README.md): the operation
 * whose path template and method match, its query parameters (names, then each value against the
 * parameter's schema), its path values, the body's media type and the body against the operation's schema
 * (types, formats, enumerations, required and undocumented properties; test/support/vendor-schema.ts).
 * A call no document describes is a failure that names the document; a described one is named by its
 * operation ("Autotask REST swagger v1.0: POST /Contracts/{parentId}/Services"), each problem by the JSON
 * pointer of the offending value (`body /type must be one of ...`, `query /pageSize must be integer`).
 *
 * ConnectWise and HaloPSA publish no machine-readable description (README.md): their calls are reported
 * as unchecked, never as passing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { observeSimulatorRequests, type SimulatorRequest } from '../../src/simulators/kit';
import { coerce, RequestSchemas } from './vendor-schema';

type Json = any;

/** One published document, as the check reads it. */
interface VendorDocument {
  /** How a failure names the document. */
  title: string;
  /** The document under fixtures/vendor-api. */
  file: string;
  /** What precedes the document's paths on the wire (Swagger basePath / the OpenAPI server's path). */
  wirePrefix: string;
  /** The path prefix an operation's name leaves out ("/V1.0": Autotask's help names entities without it). */
  labelDrops?: string;
  /**
   * Autotask's paths and property names are matched without regard to case: its swagger spells
   * `/ATServicesRest/V1.0` and `Filter`, its REST help pages `/atservicesrest/v1.0/ContractServices`
   * (autotask.net/help/developerhelp/Content/APIs/REST/Entities/ContractServicesEntity.htm) and `filter`.
   */
  caseInsensitive?: boolean;
  /**
   * Properties the vendor documents for a schema (by its name in the document) outside the document, each
   * with the page that does: a body may send them although the schema does not list them.
   */
  propertiesDocumentedElsewhere?: Record<string, { names: string[]; source: string; types?: Record<string, Json> }>;
  /**
   * Schemas the document gets wrong, replaced at their JSON pointer in the document, each with the page of
   * the vendor's that documents the value it takes.
   */
  corrections?: Record<string, { schema: Json; source: string }>;
}

/** A query or path parameter as the check reads it. */
interface Parameter {
  name: string;
  in: 'query' | 'path';
  /** Its schema (OpenAPI 3: `schema`; Swagger 2.0: the parameter's own type keywords). */
  schema: Json;
  required: boolean;
  /** How several values travel: `multi` (the key repeated) or the separator of one value. */
  arrays: 'multi' | ',' | ' ' | '\t' | '|';
}

interface Operation {
  doc: VendorDocument;
  spec: Json;
  method: string;
  template: string;
  label: string;
  regex: RegExp;
  literalSegments: number;
  schemas: RequestSchemas;
  pathParams: Parameter[];
  requiredQuery: string[];
  /** Every query parameter the operation documents. */
  knownQuery: string[];
  query: Parameter[];
  /** Header parameters the operation requires (compared without regard to case, as HTTP does). */
  requiredHeaders: string[];
  /** The body schema by media type, when the operation takes a body. */
  bodySchemas: Record<string, Json> | null;
  bodyRequired: boolean;
}

/**
 * A call a vendor documents outside its API description (OAuth token endpoints, URLs the vendor hands
 * back). Each names the page that documents it.
 */
interface DocumentedElsewhere {
  method: string;
  /** Matched against the wire path (after the simulator mount). */
  path: RegExp;
  label: string;
  /** Form or JSON body properties the page requires (they may depend on the body, e.g. its grant_type). */
  requiredBody?: (body: Record<string, unknown>) => string[];
  /** Query parameters the page requires. */
  requiredQuery?: string[];
  /** An extra condition on the call (e.g. the page is one of a documented query's). */
  applies?: (call: SimulatorRequest, contract: VendorContract) => string | null;
}

interface VendorConfig {
  documents: VendorDocument[];
  elsewhere: DocumentedElsewhere[];
}

/** Vendors without a machine-readable public description (fixtures/vendor-api/README.md). */
const UNCHECKED: Record<string, string> = {
  connectwise: 'ConnectWise publishes no machine-readable API description to the public (its developer portal needs a partner login)',
  halopsa: 'HaloPSA publishes no public API description (its swagger is served by each customer instance)',
  ncentral: 'N-central publishes no central API description (each server serves its own Swagger page at /api-explorer; no stored public copy found, fixtures/vendor-api/README.md)',
};

const VENDORS: Record<string, VendorConfig> = {
  autotask: {
    documents: [{
      title: 'Autotask REST swagger v1.0', file: 'autotask/swagger-v1.0.json', wirePrefix: '/atservicesrest',
      labelDrops: '/V1.0', caseInsensitive: true,
      propertiesDocumentedElsewhere: {
        // The swagger's model names only internalCurrencyAdjustedPrice; the entity's own page documents
        // adjustedPrice as one of the two fields an update may change.
        ContractServiceModel: {
          names: ['adjustedPrice'],
          source: 'autotask.net/help/developerhelp/Content/APIs/REST/Entities/ContractServicesEntity.htm ("On Update(), all fields are Read-Only except for adjustedPrice and invoiceDescription")',
        },
      },
      corrections: {
        // The swagger types a filter's value as its server-side ValueItem class (an object); on the wire it is
        // the value itself, or a list of them for the list operators `in` / `notIn` ("Making basic query calls
        // to the REST API", autotask.net/help/developerhelp/Content/APIs/REST/API_Calls/REST_Basic_Query_Calls.htm).
        '/definitions/Filter/properties/value': {
          source: 'autotask.net/help/developerhelp/Content/APIs/REST/API_Calls/REST_Basic_Query_Calls.htm',
          schema: { anyOf: [{ type: ['string', 'number', 'boolean'] }, { type: 'array', items: { type: ['string', 'number', 'boolean'] } }] },
        },
      },
    }],
    elsewhere: [{
      // The next page of a query is the URL Autotask answered in pageDetails.nextPageUrl: "Paginating
      // results", autotask.net/help/developerhelp/content/apis/REST/API_Calls/REST_Advanced_Query_Features.htm.
      // The swagger has no path for it; it is only a call when the entity's query is documented.
      method: 'GET',
      path: /^\/atservicesrest\/v1\.0\/([A-Za-z]+)\/query\/next$/i,
      label: 'Autotask REST docs, Advanced query features (paginating results): GET <nextPageUrl>',
      applies: (call, contract) => {
        const entity = /^\/atservicesrest\/v1\.0\/([A-Za-z]+)\//i.exec(call.path)![1];
        const query = contract.match('autotask', 'POST', `/atservicesrest/v1.0/${entity}/query`);
        return query.operation ? null : `no documented POST /${entity}/query whose page this could be`;
      },
    }],
  },
  ninjaone: {
    documents: [{ title: 'NinjaOne Public API 2.0 OpenAPI (2.0.9-draft)', file: 'ninjaone/openapi-public-api-2.0.json', wirePrefix: '' }],
    elsewhere: [{
      // The token endpoint is outside the OpenAPI (its security scheme is a bare bearer token). NinjaOne's
      // API documentation, "Authentication methods" and its client-credentials and authorization-code flows
      // (app.ninjarmm.com/apidocs-beta; ninjaone.com/docs/application-programming-interface-api/oauth-token-configuration):
      // a form POST to <instance>/ws/oauth/token. The parameters each grant needs are OAuth 2.0's
      // (RFC 6749 sections 4.1.3, 4.4.2 and 6), with the client authenticated in the body.
      method: 'POST',
      path: /^\/ws\/oauth\/token$/,
      label: 'NinjaOne API docs, OAuth token endpoint: POST /ws/oauth/token',
      requiredBody: (body) => ['grant_type', 'client_id', 'client_secret', ...({
        authorization_code: ['code', 'redirect_uri'],
        refresh_token: ['refresh_token'],
      } as Record<string, string[]>)[String(body.grant_type)] ?? []],
    }, {
      // The authorization-code flow's first step (same pages; RFC 6749 section 4.1.1).
      method: 'GET',
      path: /^\/ws\/oauth\/authorize$/,
      label: 'NinjaOne API docs, OAuth authorization endpoint: GET /ws/oauth/authorize',
      requiredQuery: ['response_type', 'client_id', 'redirect_uri'],
    }],
  },
  dattormm: {
    documents: [{
      title: 'Datto RMM API OpenAPI (build 235)', file: 'dattormm/openapi-v2.json', wirePrefix: '/api',
      corrections: {
        // The document puts the item enumeration on the array itself as well (which no array can equal);
        // its own description says the parameter takes several of those values.
        '/paths/~1v2~1activity-logs/get/parameters/6/schema': {
          source: 'the parameter\'s description in the same document ("Filters the returned activity logs based on their type. It can take multiple values separated by comma")',
          schema: { type: 'array', items: { type: 'string', enum: ['device', 'user'] } },
        },
      },
    }],
    elsewhere: [{
      // The token endpoint is outside the OpenAPI (it declares no security scheme). Datto RMM's help page
      // "Datto RMM API" (rmm.datto.com/help/en/Content/2SETUP/APIv2.htm): the password grant of the public
      // client (HTTP Basic public-client:public) with the API key as username and the secret as password,
      // at <platform>-api.centrastage.net/auth/oauth/token (RFC 6749 section 4.3.2).
      method: 'POST',
      path: /^\/auth\/oauth\/token$/,
      label: 'Datto RMM API help, OAuth token endpoint: POST /auth/oauth/token',
      requiredBody: () => ['grant_type', 'username', 'password'],
    }],
  },
  pax8: {
    documents: [
      { title: 'Pax8 Partner Endpoints OpenAPI 1.0.0', file: 'pax8/partner-endpoints-openapi.json', wirePrefix: '/v1' },
      // The token request is in Pax8's own Authentication description (POST https://api.pax8.com/v1/token).
      { title: 'Pax8 Authentication OpenAPI 1.0.0', file: 'pax8/authentication-openapi.json', wirePrefix: '/v1' },
    ],
    elsewhere: [],
  },
  kaseyabms: {
    // BMS API 2.0 (api.bms.kaseya.com/swagger/v2/swagger.json), its token operations included.
    documents: [{ title: 'Kaseya BMS API 2.0 OpenAPI', file: 'kaseyabms/bms-api-2.0.json', wirePrefix: '' }],
    elsewhere: [],
  },
};

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'vendor-api');

/** The outcome of one call. `problems` is empty when the documents describe it. */
export interface ContractVerdict {
  vendor: string;
  /** The call as sent: `POST /atservicesrest/v1.0/ContractServices`. */
  call: string;
  /** The document (and operation) that describes it, or the documents that do not. */
  operation: string | null;
  documents: string[];
  problems: string[];
}

/** Swagger 2.0 keeps a parameter's schema keywords on the parameter itself. */
const PARAMETER_SCHEMA_KEYWORDS = ['type', 'format', 'enum', 'items', 'default', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'multipleOf', 'x-nullable'];

function parameter(p: Json): Parameter {
  const schema = p.schema ?? Object.fromEntries(PARAMETER_SCHEMA_KEYWORDS.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));
  // OpenAPI 3 "Style Values": a query is `form`, exploded by default (key repeated); a path `simple` (comma).
  // Swagger 2.0: `collectionFormat`, csv by default.
  const style = p.style ?? (p.in === 'query' ? 'form' : 'simple');
  const explode = p.explode ?? style === 'form';
  const oas3 = ({ form: explode ? 'multi' : ',', simple: ',', spaceDelimited: ' ', pipeDelimited: '|' } as Record<string, Parameter['arrays']>)[style] ?? ',';
  const swagger = ({ multi: 'multi', csv: ',', ssv: ' ', tsv: '\t', pipes: '|' } as Record<string, Parameter['arrays']>)[p.collectionFormat ?? 'csv'];
  return { name: p.name, in: p.in, schema, required: p.required === true, arrays: p.schema || p.style ? oas3 : swagger ?? ',' };
}

/** The corrections a document's entry asks for, as JSON pointers into the document. */
function corrections(doc: VendorDocument, spec: Json): Record<string, Json> {
  const out: Record<string, Json> = Object.fromEntries(Object.entries(doc.corrections ?? {}).map(([k, v]) => [k, v.schema]));
  const schemas = spec.definitions ? '/definitions' : '/components/schemas';
  for (const [model, extra] of Object.entries(doc.propertiesDocumentedElsewhere ?? {})) {
    for (const name of extra.names) out[`${schemas}/${model}/properties/${name}`] = extra.types?.[name] ?? {};
  }
  return out;
}

/** The media type of a Content-Type header, without its parameters. */
const mediaType = (contentType: string | null) => (contentType ?? '').split(';')[0].trim().toLowerCase();

export class VendorContract {
  private readonly operations = new Map<string, Operation[]>();
  /** Per document title, the formats it declares that no validator checks (a value in them passes on its type alone). */
  readonly uncheckedFormats: Record<string, string[]> = {};

  constructor() {
    for (const [vendor, config] of Object.entries(VENDORS)) {
      const ops: Operation[] = [];
      for (const doc of config.documents) {
        const spec = JSON.parse(fs.readFileSync(path.join(FIXTURES, doc.file), 'utf8'));
        const schemas = new RequestSchemas(spec, {
          id: `https://vendor-api.invalid/${doc.file}`, caseInsensitive: doc.caseInsensitive, corrections: corrections(doc, spec),
        });
        if (schemas.uncheckedFormats.size > 0) this.uncheckedFormats[doc.title] = [...schemas.uncheckedFormats].sort();
        for (const [template, item] of Object.entries<Json>(schemas.spec.paths)) {
          for (const [method, op] of Object.entries<Json>(item)) {
            if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
            ops.push(this.operation(doc, schemas.spec, schemas, method.toUpperCase(), template, [...(item.parameters ?? []), ...(op.parameters ?? [])], op));
          }
        }
      }
      this.operations.set(vendor, ops);
    }
  }

  private operation(doc: VendorDocument, spec: Json, schemas: RequestSchemas, method: string, template: string, rawParams: Json[], op: Json): Operation {
    // An operation's parameter overrides the path item's of the same name and location.
    const params = [...new Map(rawParams.map((p) => schemas.resolve(p)).map((p) => [`${p.in} ${p.name}`, p])).values()];
    const segments = template.split('/').filter(Boolean);
    const pattern = segments.map((s) => (/^\{.+\}$/.test(s) ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
    const prefix = doc.wirePrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pathParams = segments.filter((s) => /^\{.+\}$/.test(s)).map((s) => {
      const name = s.slice(1, -1);
      const p = params.find((x) => x.in === 'path' && x.name === name);
      return parameter(p ?? { name, in: 'path', required: true, type: 'string' });
    });
    // Swagger 2.0: an `in: body` parameter and the media types of `consumes`; OpenAPI 3: requestBody.content.
    const bodyParam = params.find((p) => p.in === 'body');
    const requestBody = schemas.resolve(op.requestBody);
    const consumes: string[] = op.consumes ?? spec.consumes ?? ['application/json'];
    const bodySchemas = bodyParam
      ? Object.fromEntries(consumes.map((m) => [m.toLowerCase(), bodyParam.schema]))
      : requestBody?.content
        ? Object.fromEntries(Object.entries<Json>(requestBody.content).map(([m, c]) => [m.toLowerCase(), c.schema ?? {}]))
        : null;
    const label = template.startsWith(doc.labelDrops ?? '\0') ? template.slice(doc.labelDrops!.length) : template;
    const query = params.filter((p) => p.in === 'query').map(parameter);
    return {
      doc, spec, method, template, schemas,
      label: `${doc.title}: ${method} ${label}`,
      regex: new RegExp(`^${prefix}/${pattern}$`, doc.caseInsensitive ? 'i' : ''),
      literalSegments: segments.filter((s) => !/^\{.+\}$/.test(s)).length,
      pathParams,
      requiredQuery: query.filter((p) => p.required).map((p) => p.name),
      knownQuery: query.map((p) => p.name),
      query,
      requiredHeaders: params.filter((p) => p.in === 'header' && p.required === true).map((p) => p.name),
      bodySchemas,
      bodyRequired: bodyParam ? bodyParam.required === true : requestBody?.required === true,
    };
  }


  /**
   * Compiles every schema a request can be held against (each operation's parameters and bodies), so a
   * document the rewriting cannot read fails here rather than on the first call that reaches it. Returns
   * the operations that would not compile, with why.
   */
  compileAll(): string[] {
    const failures: string[] = [];
    for (const ops of this.operations.values()) {
      for (const op of ops) {
        const schemas = [...op.pathParams, ...op.query].map((p) => p.schema).concat(Object.values(op.bodySchemas ?? {}));
        for (const schema of schemas) {
          try { op.schemas.validator(schema); } catch (err) { failures.push(`${op.label}: ${(err as Error).message}`); }
        }
      }
    }
    return failures;
  }

  /** The documented operation a call claims (most literal path segments first), or why there is none. */
  match(vendor: string, method: string, wirePath: string): { operation: Operation | null; problem: string | null } {
    const candidates = (this.operations.get(vendor) ?? [])
      .filter((o) => o.regex.test(wirePath))
      .sort((a, b) => b.literalSegments - a.literalSegments);
    const sameMethod = candidates.find((o) => o.method === method);
    if (sameMethod) return { operation: sameMethod, problem: null };
    if (candidates.length === 0) return { operation: null, problem: 'no path in the document matches' };
    const methods = [...new Set(candidates.filter((o) => o.template === candidates[0].template).map((o) => o.method))];
    return { operation: null, problem: `${candidates[0].template} is documented for ${methods.join(', ')} only` };
  }

  /** The verdict on one call; null for a vendor without a machine-readable description. */
  check(call: SimulatorRequest): ContractVerdict | null {
    const config = VENDORS[call.vendor];
    if (!config) return null;
    const verdict: ContractVerdict = {
      vendor: call.vendor,
      call: `${call.method} ${call.path}`,
      operation: null,
      documents: config.documents.map((d) => d.title),
      problems: [],
    };
    const elsewhere = config.elsewhere.find((e) => e.method === call.method && e.path.test(call.path));
    if (elsewhere) {
      verdict.operation = elsewhere.label;
      const why = elsewhere.applies?.(call, this);
      if (why) verdict.problems.push(why);
      const body = call.body && typeof call.body === 'object' ? (call.body as Record<string, unknown>) : {};
      for (const name of elsewhere.requiredBody?.(body) ?? []) if (body[name] == null) verdict.problems.push(`body property "${name}" is required`);
      for (const q of elsewhere.requiredQuery ?? []) if (!call.queryKeys.includes(q)) verdict.problems.push(`query parameter "${q}" is required`);
      return verdict;
    }
    const { operation, problem } = this.match(call.vendor, call.method, call.path);
    if (!operation) {
      verdict.problems.push(`not documented: ${problem}`);
      return verdict;
    }
    verdict.operation = operation.label;
    verdict.problems.push(...this.parameterProblems(operation, call));
    return verdict;
  }

  private parameterProblems(op: Operation, call: SimulatorRequest): string[] {
    const problems: string[] = [];
    const values = op.regex.exec(call.path)!.slice(1);
    op.pathParams.forEach((p, i) => {
      let text = values[i] ?? '';
      try { text = decodeURIComponent(text); } catch { problems.push(`path /${p.name} is not a valid percent-encoded value, was "${text}"`); return; }
      problems.push(...this.valueProblems(op, p, [text], 'path'));
    });
    const sameName = (a: string, b: string) => (op.doc.caseInsensitive ? a.toLowerCase() === b.toLowerCase() : a === b);
    for (const q of op.requiredQuery) if (!call.queryKeys.some((k) => sameName(k, q))) problems.push(`query parameter "${q}" is required`);
    for (const k of new Set(call.queryKeys)) if (!op.knownQuery.some((q) => sameName(k, q))) problems.push(`query parameter "${k}" is not documented`);
    // Header names are reported by the simulators' observer; a hand-made call without them is not judged on headers.
    for (const h of call.headerNames ? op.requiredHeaders : []) if (!call.headerNames!.includes(h.toLowerCase())) problems.push(`header "${h}" is required`);
    for (const p of op.query) {
      const sent = Object.entries(call.query ?? {}).filter(([k]) => sameName(k, p.name)).flatMap(([, v]) => v);
      if (sent.length > 0) problems.push(...this.valueProblems(op, p, sent, 'query'));
    }
    if (op.bodySchemas) problems.push(...this.bodyProblems(op, call));
    return problems;
  }

  /** A parameter's values (text, as sent) read by its declared type, then held against its schema. */
  private valueProblems(op: Operation, p: Parameter, sent: string[], where: 'query' | 'path'): string[] {
    const schema = op.schemas.resolve(p.schema) ?? {};
    const isArray = [schema.type].flat().includes('array');
    if (!isArray && sent.length > 1) return [`${where} /${p.name} is sent ${sent.length} times, the document takes one value`];
    const items = isArray ? (p.arrays === 'multi' ? sent : sent.flatMap((s) => s.split(p.arrays))) : [];
    const value = isArray
      ? items.map((t) => coerce(t, schema.items ?? {}, (n) => op.schemas.resolve(n)))
      : coerce(sent[0], schema, (n) => op.schemas.resolve(n));
    return op.schemas.problems(p.schema, value, `${where} /${p.name}`).map((m) => m.replace(`${where} /${p.name} /`, `${where} /${p.name}/`));
  }

  /** The body's media type is one the operation takes, and the body matches that media type's schema. */
  private bodyProblems(op: Operation, call: SimulatorRequest): string[] {
    const body = call.body;
    const empty = body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
    if (empty) return op.bodyRequired ? ['a request body is required'] : [];
    const media = mediaType(call.contentType);
    const taken = Object.keys(op.bodySchemas!);
    // A media range (`*/*`, `application/*`, `application/*+json`) takes every type it spells.
    const range = (m: string) => new RegExp(`^${m.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
    const key = taken.find((m) => m === media) ?? taken.find((m) => m.includes('*') && range(m).test(media));
    if (!key) return [`body is sent as "${media || 'no content type'}", the operation takes ${taken.map((m) => `"${m}"`).join(', ')}`];
    let value = body;
    // A form body carries text: read each property by its declared type (OpenAPI 3 "Encoding Object",
    // "Special Considerations for multipart Content").
    if ((key === 'application/x-www-form-urlencoded' || key === 'multipart/form-data') && body && typeof body === 'object') {
      const props = op.schemas.resolve(op.bodySchemas![key])?.properties ?? {};
      value = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' && props[k] ? coerce(v, props[k], (n) => op.schemas.resolve(n)) : v]));
    }
    return op.schemas.problems(op.bodySchemas![key], value, 'body');
  }
}


/** What a recording saw: the verdict of each distinct call, and the calls of vendors the check cannot read. */
export interface ContractReport {
  verdicts: ContractVerdict[];
  failures: ContractVerdict[];
  unchecked: { vendor: string; reason: string; calls: string[] }[];
  /**
   * One copy of a request per documented operation it matched (the first seen), the call exactly as the
   * simulator received it: what the mutation tests alter.
   */
  samples: Map<string, SimulatorRequest>;
}

/**
 * Records every simulator call of this process from now on; `stop()` returns the report. Calls are
 * told apart by method, path (ids included) and problems, so a sync of thousands of pages stays small.
 */
export function recordVendorContract(contract = new VendorContract()): { stop: () => ContractReport } {
  const verdicts = new Map<string, ContractVerdict>();
  const unchecked = new Map<string, Set<string>>();
  const samples = new Map<string, SimulatorRequest>();
  const unobserve = observeSimulatorRequests((call) => {
    const verdict = contract.check(call);
    if (!verdict) {
      if (!unchecked.has(call.vendor)) unchecked.set(call.vendor, new Set());
      unchecked.get(call.vendor)!.add(`${call.method} ${call.path}`);
      return;
    }
    verdicts.set(`${verdict.vendor} ${verdict.call} ${verdict.problems.join('|')}`, verdict);
    if (verdict.operation && !samples.has(verdict.operation)) samples.set(verdict.operation, structuredClone(call));
  });
  return {
    stop: () => {
      unobserve();
      const all = [...verdicts.values()];
      return {
        verdicts: all,
        failures: all.filter((v) => v.problems.length > 0),
        unchecked: [...unchecked].map(([vendor, calls]) => ({ vendor, reason: UNCHECKED[vendor] ?? 'no description', calls: [...calls] })),
        samples,
      };
    },
  };
}

/** One line per failing call, naming the document and the operation (or its absence). */
export function describeFailures(failures: ContractVerdict[]): string {
  const lines = new Map<string, string>();
  for (const f of failures) {
    // Ids vary between calls of one operation: one line per operation and problem is enough.
    const key = `${f.vendor} ${f.operation ?? f.call} ${f.problems.join('; ')}`;
    if (!lines.has(key)) {
      lines.set(key, f.operation
        ? `${f.operation} (sent ${f.call}): ${f.problems.join('; ')}`
        : `${f.documents.join(' / ')}: ${f.call} is not documented (${f.problems.map((p) => p.replace(/^not documented: /, '')).join('; ')})`);
    }
  }
  return [...lines.values()].sort().join('\n');
}

export const UNCHECKED_VENDORS = UNCHECKED;
