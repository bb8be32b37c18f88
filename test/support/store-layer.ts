/**
 * Finds data access outside the store layer, with the program's type checker (names cannot fool it).
 *
 * Data access is a call whose receiver is a database handle — a TypeORM `DataSource`, `EntityManager`,
 * `Repository`, `QueryRunner` or query builder, a pg pool or client, a PGlite instance: anything declared
 * by the database packages — or a call into the database layer (src/db/) that hands it such a handle
 * (`preparedQuery(ds, …)`). The store layer is every `*.store.ts` module and src/db/, the database itself
 * (connection, migrations, prepared statements): there and only there data access is the point.
 *
 * Runnable on any checkout: `dataAccessOutsideStores(root)`, or
 * `STORE_LAYER_ROOT=<checkout> STORE_LAYER_REPORT=1 jest test/store-layer.test.ts` prints the list.
 */
import path from 'node:path';
import ts from 'typescript';

/** Where the database packages declare their types (TypeORM, pg, PGlite). */
const DATABASE_PACKAGE = /[\\/]node_modules[\\/](typeorm|pg|pg-pool|@types[\\/]pg|@electric-sql[\\/]pglite)[\\/]/;

/** What only a database handle is called (for a receiver typed `any`). */
const DATABASE_METHOD = /^(query|getRepository|createQueryBuilder|createQueryRunner|transaction)$/;

export interface DataAccess { file: string; line: number; call: string }

/** Files of the store layer: a feature's stores, and the database layer that they build on. */
export function isStoreLayer(file: string): boolean {
  return file.endsWith('.store.ts') || file.startsWith('src/db/');
}

/** Source that may hold data access: src/ and jobs/, without the tests. */
function isScanned(file: string): boolean {
  return /^(src|jobs)\//.test(file) && !file.endsWith('.test.ts');
}

export function dataAccessOutsideStores(root: string): DataAccess[] {
  return dataAccess(root).filter((a) => !isStoreLayer(a.file));
}

/** Every data access in src/ and jobs/, stores included. */
export function dataAccess(root: string): DataAccess[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); },
  });
  if (!config) throw new Error(`no tsconfig.json in ${root}`);
  const program = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true } });
  const checker = program.getTypeChecker();

  const declaredByDatabase = (symbol: ts.Symbol | undefined): boolean =>
    !!symbol?.declarations?.some((d) => DATABASE_PACKAGE.test(d.getSourceFile().fileName));

  const isDatabaseType = (type: ts.Type, seen = new Set<ts.Type>()): boolean => {
    if (seen.has(type)) return false;
    seen.add(type);
    if (type.isUnionOrIntersection()) return type.types.some((t) => isDatabaseType(t, seen));
    if (declaredByDatabase(type.getSymbol()) || declaredByDatabase(type.aliasSymbol)) return true;
    const target = (type as ts.TypeReference).target;
    if (target && target !== type && isDatabaseType(target, seen)) return true;
    return type.isClassOrInterface() && (checker.getBaseTypes(type) ?? []).some((t) => isDatabaseType(t, seen));
  };

  const isInDatabaseLayer = (symbol: ts.Symbol | undefined): boolean => {
    const resolved = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return !!resolved?.declarations?.some((d) => relative(root, d.getSourceFile().fileName).startsWith('src/db/'));
  };

  /** A call that reaches the database: on a database handle, or into src/db/ with one. */
  const isDataAccess = (node: ts.Node): node is ts.CallExpression => {
    if (!ts.isCallExpression(node)) return false;
    const callee = node.expression;
    if (ts.isPropertyAccessExpression(callee)) {
      if (declaredByDatabase(checker.getSymbolAtLocation(callee.name))) return true;
      const receiver = checker.getTypeAtLocation(callee.expression);
      if (isDatabaseType(receiver)) return true;
      // A handle cast to `any` loses its type, not its name.
      if (receiver.flags & ts.TypeFlags.Any && DATABASE_METHOD.test(callee.name.text)) return true;
    }
    return isInDatabaseLayer(checker.getSymbolAtLocation(ts.isPropertyAccessExpression(callee) ? callee.name : callee))
      && node.arguments.some((a) => isDatabaseType(checker.getTypeAtLocation(a)));
  };

  /** `.manager` taken off a handle to run statements elsewhere. */
  const isManagerTaken = (node: ts.Node): boolean =>
    ts.isPropertyAccessExpression(node) && node.name.text === 'manager' && isDatabaseType(checker.getTypeAtLocation(node.expression))
    && !(ts.isPropertyAccessExpression(node.parent) && ts.isCallExpression(node.parent.parent) && node.parent.parent.expression === node.parent);

  const found: DataAccess[] = [];
  for (const sourceFile of program.getSourceFiles()) {
    const file = relative(root, sourceFile.fileName);
    if (!isScanned(file)) continue;
    const visit = (node: ts.Node): void => {
      // One access per chain (`ds.getRepository(X).find()` is one): the outermost call that reaches the database.
      const receiverOfAccess = ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node
        && isDataAccess(node.parent.parent) && node.parent.parent.expression === node.parent;
      if ((isDataAccess(node) || isManagerTaken(node)) && !receiverOfAccess) {
        const { line } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
        found.push({ file, line: line + 1, call: node.getText(sourceFile).replace(/\s+/g, ' ').slice(0, 100) });
      }
      ts.forEachChild(node, visit);
    };
    ts.forEachChild(sourceFile, visit);
  }
  return found.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

function relative(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}
