/**
 * No function of more than 100 lines outside the simulators: a function that long does several
 * things, and a reader has to hold all of them at once. Every function declaration, method, constructor,
 * accessor, arrow function and function expression of src, jobs and entities is measured from its first to
 * its last line, nested closures included in the function that holds them. The simulators (vendor stand-ins
 * for tests) and test files are left out.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const DIRS = ['src', 'jobs', 'entities'];
const MAX_LINES = 100;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (rel !== 'src/simulators') out.push(...sourceFiles(rel));
    } else if (entry.isFile() && /\.tsx?$/.test(entry.name) && !/\.d\.ts$|\.test\.tsx?$/.test(entry.name)) out.push(rel);
  }
  return out;
}

/** What a reader calls the function: its own name, or the variable, property or class member it is assigned to. */
function functionName(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText(file);
  }
  if (ts.isBinaryExpression(parent)) return parent.left.getText(file);
  return '(anonymous)';
}

export interface LongFunction { file: string; line: number; name: string; lines: number }

/** Every function of at least `min` lines in src, jobs and entities (simulators and tests left out). */
export function longFunctions(min: number): LongFunction[] {
  const found: LongFunction[] = [];
  for (const file of DIRS.flatMap((d) => sourceFiles(d))) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const fn = node as ts.FunctionLikeDeclaration;
        const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
        const lines = last - first + 1;
        if (lines >= min) found.push({ file, line: first + 1, name: functionName(fn, source), lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.lines - a.lines);
}

describe('functions', () => {
  it(`are at most ${MAX_LINES} lines long outside the simulators`, () => {
    expect(longFunctions(1).length).toBeGreaterThan(1000);
    const over = longFunctions(MAX_LINES + 1);
    expect(over.map((f) => `${f.file}:${f.line} ${f.name} ${f.lines}`)).toEqual([]);
  });
});
