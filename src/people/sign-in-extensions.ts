/**
 * What other sign-in methods add to the sign-in pages of both consoles (single sign-on, src/people/sso):
 * a section of the sign-in page, and a rule that refuses a magic link for an address (a domain whose
 * owner requires SSO). Registered once at start by the feature that owns the method; the sign-in
 * routes of this folder read them (docs/architecture.md, People).
 */
import type { SafeHtml } from '../pages/html';

export interface SignInPageContext {
  /** The CSRF token of forms shown before sign-in (PeopleSessions.signInFormToken); post it as `csrf`. */
  formToken: string;
  /** Which console the page signs in to. */
  area: 'console' | 'app';
}

type Section = (ctx: SignInPageContext) => SafeHtml;
/** A message saying how to sign in instead, or null when a magic link may be sent to that address. */
type MagicLinkRule = (email: string) => Promise<string | null>;

const sections: Section[] = [];
const rules: MagicLinkRule[] = [];

export function registerSignInSection(section: Section): void {
  sections.push(section);
}

export function registerMagicLinkRule(rule: MagicLinkRule): void {
  rules.push(rule);
}

export function signInSections(ctx: SignInPageContext): SafeHtml[] {
  return sections.map((s) => s(ctx));
}

/** The first refusal of a magic link for the address, or null. */
export async function magicLinkRefusal(email: string): Promise<string | null> {
  for (const rule of rules) {
    const message = await rule(email);
    if (message) return message;
  }
  return null;
}
