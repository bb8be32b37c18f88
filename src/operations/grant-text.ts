/**
 * The grant sentence of an operation in the reference (/openapi.json), stated from the declaration's
 * data: a key, a need, or a derived rule's declared cases. Never from the rule itself, whose text is code.
 */
import type { GrantKey } from '../access/caller';
import type { GrantCase, GrantRule } from './operation';

const KIND: Record<string, string> = { psa: 'the PSA', rmm: 'the RMM', distributor: 'the distributor' };

const code = (k: GrantKey) => `\`${k}\``;
const on = (kind: string | undefined) => (kind ? ` on ${KIND[kind] ?? kind}` : '');

export function grantText(rule: GrantRule<any> | undefined): string | undefined {
  if (rule === undefined) return undefined;
  if (rule === 'none') return 'Grant: none (your own configuration, on a tenant your key sees).';
  if (typeof rule === 'string') return `Grant ${code(rule)}.`;
  if (typeof rule === 'function') return `Grant by target: ${rule.cases.map(caseText).join('; ')}.`;
  const keys = typeof rule.key === 'string' ? [rule.key] : rule.key;
  return keys.length === 1 ? `Grant ${code(keys[0])}${on(rule.kind)}.` : `Any one of the grants ${keys.map(code).join(', ')}${on(rule.kind)}.`;
}

function caseText(c: GrantCase): string {
  return `${code(c.key)}${on(c.kind)} when ${c.when}`;
}
