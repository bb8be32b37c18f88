/**
 * Ask (docs/architecture.md, Device write and ask): POST /tenants/{tenant_id}/ask and GET /tenants/{tenant_id}/ask/examples.
 * Role `reader`: an ISV that sees the tenant or the tenant's MSP key; the path tenant is the only scope.
 */
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf } from '../operations/operation';
import { TenantPath, z } from '../shared/request';
import { AskAnswer, AskBody, AskExamples, AskQuery } from './ask.schemas';
import { CITE_CAP, EXAMPLE_QUESTIONS, RECORD_WORDS, type AskService } from './ask.service';
import { PARSER_WORDS, parseQuestion } from './parser';
import { TIME_WINDOW_FORMS } from './time-windows';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface AskServices {
  ask: AskService;
}
const defineOperation = operationsUsing<AskServices>();

const FAMILY_DOC = [
  'The default engine is a deterministic parser (no model) of this family:',
  ...EXAMPLE_QUESTIONS.map((f) => `- ${f.family}: \`${f.pattern}\` (e.g. "${f.questions[0]}")`),
  '', 'Records and their filters:', ...RECORD_WORDS.map((w) => `- ${w}`),
  '', `Time windows (UTC, whole days, weeks start on Monday): ${TIME_WINDOW_FORMS.join('; ')}.`,
  '', 'Companies are matched case-insensitively against the company names in the tenant\'s store (the legal suffix, as in Ltd or Inc, may be left out). '
  + 'Every word must be understood; a question with a word the parser does not know is not answered (`answered: false`, with `suggestions`), never answered about something else. '
  + `Every figure in \`answer\` is counted from the store and every record counted is cited in \`records\`, up to ${CITE_CAP} (the answer says so when capped). `
  + 'With ASK_MODEL_BASE_URL set, an OpenAI-compatible chat model translates the question into the same structured query instead; '
  + 'its query is validated by the same schema before it runs (an unknown field or resource is refused and nothing runs).',
].join('\n');

const ask = defineOperation({
  name: 'ask', kind: 'query', summary: 'Ask a question about the tenant\'s data', tag: 'Ask', role: 'reader',
  description: `Answers a question in plain English from the tenant's synchronised store only: \`{answered, answer, query, records, as_of, suggestions}\`. \`query\` is the structured query that was run, \`records\` cites every record the answer rests on.\n\n${FAMILY_DOC}`,
  http: { method: 'post', path: '/tenants/{tenant_id}/ask', documented: true },
  path: TenantPath, body: AskBody,
  responses: [{ status: 200, schema: AskAnswer, description: 'The answer (answered or not).' }],
  errors: [],
  handle: async ({ body }, ctx) => ctx.services.ask.ask(tenantOf(ctx), body.question),
});

const askExamples = defineOperation({
  name: 'ask_examples', kind: 'query', summary: 'The question family ask understands, with examples', tag: 'Ask', role: 'reader',
  description: `Lists the documented question family, each example with the structured query it becomes today for this tenant.\n\n${FAMILY_DOC}`,
  http: { method: 'get', path: '/tenants/{tenant_id}/ask/examples', documented: false },
  path: TenantPath, query: z.object({}).strict(),
  responses: [{ status: 200, schema: AskExamples, description: 'The question family.' }],
  errors: [],
  handle: async (_input, ctx) => {
    const service = ctx.services.ask;
    const context = service.parseContext(await service.storeNames(tenantOf(ctx)));
    return {
      families: EXAMPLE_QUESTIONS.map((f) => ({
        name: f.family, pattern: f.pattern,
        // Only the examples the parser reads with this tenant's names (a company of the sandbox may be absent).
        examples: f.questions.flatMap((question) => {
          const parsed = parseQuestion(question, context);
          return parsed.ok ? [{ question, query: AskQuery.parse(parsed.query) }] : [];
        }),
      })),
      resources: RECORD_WORDS,
      time_windows: TIME_WINDOW_FORMS,
      words: PARSER_WORDS,
      cited_cap: CITE_CAP,
      engine: service.engine,
    };
  },
});

export const askFeature: FeatureModule<AskServices> = { name: 'ask', operations: [ask, askExamples] };
