/**
 * The optional ask engine: an OpenAI-compatible chat model (POST <base>/chat/completions, the OpenAI
 * request and response shape) translates the question into the structured query JSON, nothing else.
 * Its answer is parsed and validated by the same AskQuery schema before anything runs; the figures
 * still come only from the store. The outbound call goes through the webhook SSRF guard (loopback only
 * under WEBHOOK_ALLOW_LOOPBACK) and connects to the checked address; the key is sent, never logged.
 */
import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import { bareHostname, checkReceiverUrl, pinnedLookup, ReceiverUrlRefused } from '../webhooks/ssrf-guard';
import { AskQuery, FILTERS_OF, GROUPS_OF } from './ask.schemas';

export interface ModelConfig {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

export type Translation = { ok: true; query: AskQuery } | { ok: false; reason: string };

const MAX_RESPONSE_BYTES = 256 * 1024;

/** The chat-completions answer, as much of it as we read. */
const ChatCompletion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

export function systemPrompt(now: Date): string {
  const schema = JSON.stringify(z.toJSONSchema(AskQuery, { unrepresentable: 'any', io: 'input' }));
  return [
    'You translate a managed service provider\'s question about its own data into ONE JSON object, the structured query below.',
    'Answer with the JSON object only: no prose, no code fence. Never invent a field, a resource or a value outside the schema.',
    `Filters each resource has: ${JSON.stringify(FILTERS_OF)}. Groupings for aggregate "top": ${JSON.stringify(GROUPS_OF)}.`,
    'Time filters are RFC 3339 UTC timestamps; weeks start on Monday.',
    `Now is ${now.toISOString()}.`,
    `JSON schema: ${schema}`,
  ].join('\n');
}

export class ModelEngine {
  constructor(private readonly config: ModelConfig, private readonly allowLoopback: boolean, private readonly now: () => Date = () => new Date()) {}

  async translate(question: string): Promise<Translation> {
    let target;
    try {
      target = await checkReceiverUrl(`${this.config.baseUrl}/chat/completions`, { allowLoopback: this.allowLoopback });
    } catch (err) {
      const why = err instanceof ReceiverUrlRefused ? err.message : 'the address was refused';
      return { ok: false, reason: `The ask model is not reachable (${why}); nothing was run.` };
    }
    const body = JSON.stringify({
      model: this.config.model,
      temperature: 0,
      messages: [{ role: 'system', content: systemPrompt(this.now()) }, { role: 'user', content: question }],
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const res = await post(target.url, target.address, target.family, body, headers, this.config.timeoutMs);
    if (res.error || res.status === null) return { ok: false, reason: `The ask model did not answer (${res.error ?? 'no answer'}); nothing was run.` };
    if (res.status < 200 || res.status >= 300) return { ok: false, reason: `The ask model answered HTTP ${res.status}; nothing was run.` };
    let content: string;
    try {
      const parsed = ChatCompletion.safeParse(JSON.parse(res.body));
      if (!parsed.success) return { ok: false, reason: 'The ask model\'s answer is not a chat completion; nothing was run.' };
      content = parsed.data.choices[0].message.content;
    } catch {
      return { ok: false, reason: 'The ask model\'s answer is not JSON; nothing was run.' };
    }
    let candidate: unknown;
    try {
      candidate = JSON.parse(content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, ''));
    } catch {
      return { ok: false, reason: 'The ask model did not answer with a JSON query; nothing was run.' };
    }
    const valid = AskQuery.safeParse(candidate);
    if (!valid.success) {
      const why = valid.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
      return { ok: false, reason: `The model's query was refused and nothing was run (${why}).` };
    }
    return { ok: true, query: valid.data };
  }
}

interface PostResult { status: number | null; body: string; error: string | null }

/** One POST to the checked address: no redirects followed, no connection reused, bounded in time and size. */
function post(url: URL, address: string, family: 4 | 6, body: string, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = client.request({
      method: 'POST', protocol: url.protocol, hostname: bareHostname(url), port: url.port || undefined,
      path: `${url.pathname}${url.search}`, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(address, family), agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) { res.destroy(); finish({ status: null, body: '', error: 'answer too large' }); return; }
        chunks.push(chunk);
      });
      res.on('end', () => finish({ status: res.statusCode ?? null, body: Buffer.concat(chunks).toString('utf8'), error: null }));
      res.on('error', () => finish({ status: null, body: '', error: 'answer broken off' }));
    });
    const timer = setTimeout(() => { finish({ status: null, body: '', error: 'timeout' }); req.destroy(); }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ status: null, body: '', error: `network error: ${err.code ?? 'unknown'}` }));
    req.end(body);
  });
}
