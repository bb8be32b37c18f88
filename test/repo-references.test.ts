/**
 * Every comment and document points inside the repository: a newcomer with only a clone can follow each
 * reference. It fails on a pointer to a document kept elsewhere (the team's design notes, a sibling
 * `../shared` folder or anything else a relative path reaches outside the clone), on an absolute path of
 * someone's machine, on a file named as a reference that the repository does not have, and on a reference
 * to the issue tracker by number (name the topic in docs/architecture.md instead). It also holds every
 * "docs/architecture.md, <Topic>" reference to a heading that page has.
 *
 * Files: those git lists (tracked, or new and not ignored), or, without git, the working tree minus
 * dependencies and build output; text files only, lockfiles aside.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const SELF = path.relative(ROOT, __filename).split(path.sep).join('/');
const ARCHITECTURE = 'docs/architecture.md';
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'dist-test', '.data', 'coverage']);
const LOCKFILES = new Set(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml']);

function gitFiles(): string[] | null {
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20,
    });
    return out.split('\0').filter(Boolean);
  } catch {
    return null;
  }
}

function walk(dir = ''): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('dist-test-')) continue;
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...walk(rel));
    else if (entry.isFile()) files.push(rel);
  }
  return files;
}

interface TextFile { file: string; text: string }

function repositoryTextFiles(): TextFile[] {
  const listed = gitFiles() ?? walk();
  const files: TextFile[] = [];
  for (const file of listed) {
    if (file === SELF || file.split('/').some((part) => SKIPPED_DIRS.has(part)) || LOCKFILES.has(path.posix.basename(file))) continue;
    let buf: Buffer;
    try {
      buf = fs.readFileSync(path.join(ROOT, file));
    } catch {
      continue; // listed by git but deleted in the working tree
    }
    if (buf.includes(0)) continue; // binary
    files.push({ file, text: buf.toString('utf8') });
  }
  return files;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Line breaks and comment leaders folded into one space (none after a slash: `owner/` + `name` is one word). */
function fold(text: string): string {
  return text.replace(/(\/)?\s*\n\s*(?:\*(?!\/)|\/\/|#)?\s*/g, (_m, slash?: string) => (slash ? '/' : ' '));
}

/** The text before `index`, folded. */
function before(text: string, index: number, chars: number): string {
  return fold(text.slice(Math.max(0, index - chars), index));
}

/** The text after `index`, folded. */
function after(text: string, index: number, chars: number): string {
  return fold(text.slice(index, index + chars));
}

/** A reference into another project's repository (`owner/name` right before it, or a URL). */
function namesAnotherRepository(text: string, index: number): boolean {
  const lead = before(text, index, 120);
  return /(?:[\w.-]+\/[\w.-]+|https?:\/\/\S+)(?:'s)?[\s,;:(]*(?:\S+[\s,;:]+){0,2}$/.test(lead);
}

interface Violation { file: string; line: number; what: string }

/** Pointers to files outside the repository: design notes, absolute machine paths, relative paths leaving it. */
function outsidePointers({ file, text }: TextFile): Violation[] {
  const found: Violation[] = [];
  const add = (index: number, what: string) => found.push({ file, line: lineOf(text, index), what });
  for (const m of text.matchAll(/\bdesign(?:\.md\b|\s+(?:section|§)\s*\d)|\bdesign\s*§\s*\d/gi)) {
    add(m.index, `"${m[0]}": the design notes are not in the repository; name the topic of ${ARCHITECTURE}`);
  }
  for (const m of text.matchAll(/(?<![\w.~-])(?:\/(?:work|home|root|Users)\/[^\s'"`)]*|[A-Za-z]:\\(?:Users|work)\\[^\s'"`)]*)/g)) {
    add(m.index, `"${m[0]}": an absolute path on someone's machine`);
  }
  for (const m of text.matchAll(/(?<![\w./-])(?:\.\.\/)+[\w.@-]*(?:\/[\w.@-]+)*/g)) {
    const target = path.resolve(ROOT, path.dirname(file), m[0]);
    if (path.relative(ROOT, target).startsWith('..')) add(m.index, `"${m[0]}" leaves the repository`);
  }
  return found;
}

/** Files named as references (`something.md`) that the repository does not have. */
function missingDocuments({ file, text }: TextFile, exists: (rel: string) => boolean): Violation[] {
  const found: Violation[] = [];
  for (const m of text.matchAll(/(?<![\w./-])[\w./-]*[\w-]\.md\b/g)) {
    const name = m[0].replace(/^\.\//, '');
    if (exists(name) || exists(path.posix.join(path.posix.dirname(file), name))) continue;
    if (namesAnotherRepository(text, m.index)) continue;
    found.push({ file, line: lineOf(text, m.index), what: `"${m[0]}" names a document the repository does not have` });
  }
  return found;
}

/** References to the issue tracker by number (another project's issues, named by owner/name, are fine). */
function trackerReferences({ file, text }: TextFile): Violation[] {
  const found: Violation[] = [];
  for (const m of text.matchAll(/\bissue\s+#?\d+/gi)) {
    if (namesAnotherRepository(text, m.index)) continue;
    found.push({ file, line: lineOf(text, m.index), what: `"${m[0]}" points to the issue tracker; name the topic of ${ARCHITECTURE} instead` });
  }
  return found;
}

function architectureHeadings(): string[] {
  const page = fs.readFileSync(path.join(ROOT, ARCHITECTURE), 'utf8');
  return [...page.matchAll(/^#{1,4}\s+(.+?)\s*$/gm)].map((m) => m[1]).sort((a, b) => b.length - a.length);
}

/** "docs/architecture.md, <Topic>[; <Topic>]" references whose first topic is not a heading of the page. */
function unknownTopics({ file, text }: TextFile, headings: string[]): Violation[] {
  const found: Violation[] = [];
  for (const m of text.matchAll(/docs\/architecture\.md,/g)) {
    const rest = after(text, m.index + m[0].length, 200).trimStart();
    const heading = headings.find((h) => rest.startsWith(h) && !/^[A-Za-z0-9]/.test(rest.slice(h.length)));
    if (!heading) {
      found.push({ file, line: lineOf(text, m.index), what: `"docs/architecture.md, ${rest.slice(0, 40)}..." names no heading of ${ARCHITECTURE}` });
    }
  }
  return found;
}

const format = (vs: Violation[]) => vs.map((v) => `${v.file}:${v.line}: ${v.what}`).join('\n');

describe('references in the repository', () => {
  const files = repositoryTextFiles();
  const names = new Set(files.map((f) => f.file));
  const exists = (rel: string) => names.has(path.posix.normalize(rel)) || fs.existsSync(path.join(ROOT, rel));

  it('reads the repository (sanity: the architecture page and this suite\'s sources are found)', () => {
    expect(names.has(ARCHITECTURE)).toBe(true);
    expect(names.has('src/app.ts')).toBe(true);
  });

  it('no comment or document points to a file outside the repository', () => {
    expect(format(files.flatMap(outsidePointers))).toBe('');
  });

  it('every document named as a reference exists in the repository', () => {
    expect(format(files.flatMap((f) => missingDocuments(f, exists)))).toBe('');
  });

  it('no comment points to the issue tracker by number', () => {
    expect(format(files.flatMap(trackerReferences))).toBe('');
  });

  it(`every "${ARCHITECTURE}, <Topic>" reference names a heading of that page`, () => {
    const headings = architectureHeadings();
    expect(headings).toEqual(expect.arrayContaining([
      'Tenancy, keys and grants', 'Sandbox', 'Reads', 'Writes', 'Errors', 'Events and webhooks', 'MCP', 'Operations',
      'Vendor API budget', 'Agreements and billing', 'Companies, contacts and identity', 'Distributor', 'Projects',
      'Device write and ask', 'Proof', 'Connect sessions and console', 'Connectors',
    ]));
    expect(format(files.flatMap((f) => unknownTopics(f, headings)))).toBe('');
  });

  it('the checks catch what they are for', () => {
    const probe = (text: string, file = 'src/x/y.ts'): Violation[] => [
      ...outsidePointers({ file, text }), ...missingDocuments({ file, text }, exists), ...trackerReferences({ file, text }),
      ...unknownTopics({ file, text }, architectureHeadings()),
    ];
    expect(probe('/** The rule (design.md section 6). */')).not.toHaveLength(0);
    expect(probe('/** See ../../../shared/notes.txt for why. */')).not.toHaveLength(0);
    expect(probe("import { z } from '../shared/request';")).toHaveLength(0);
    expect(probe('// copied from /home/someone/project/x.ts')).not.toHaveLength(0);
    expect(probe('// as issue 13 said')).not.toHaveLength(0);
    expect(probe('// (LabtechConsulting/ConnectWise-Manage-Powershell\n *   issue 4)')).toHaveLength(0);
    expect(probe(' * (models: sowderca/\n *   connectwise-ruby-sdk docs/ServiceNote.md)')).toHaveLength(0);
    expect(probe('// see vendors.md')).not.toHaveLength(0);
    expect(probe('// see docs/vendors.md, third pass')).toHaveLength(0);
    expect(probe('/** (docs/architecture.md, Writes) */')).toHaveLength(0);
    expect(probe('/** (docs/architecture.md, Tenancy, keys\n * and grants) */')).toHaveLength(0);
    expect(probe('/** (docs/architecture.md, Write skeleton) */')).not.toHaveLength(0);
  });
});
