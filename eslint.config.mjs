// @ts-check
/**
 * Lint: typescript-eslint's recommended rules (with ESLint's own recommended set under them) over the
 * service's TypeScript: src, jobs, entities and test. `npm run lint` runs it after the compiler's unused
 * check; CI runs `npm run lint` after the typecheck.
 *
 * Rule choices (kept few, so that what the recommended set says still holds):
 * - no-unused-vars is off: `tsc --noUnusedLocals --noUnusedParameters` in the same script already refuses
 *   them (with the compiler's own rule for an unused `_param` before a used one); one rule, one place.
 * - no-explicit-any is off in test files: there `any` is a response's or a vendor's JSON read as the test
 *   asserts it (some 550 of them). In the service it stays on, except in the modules listed below, each
 *   group with its reason; anywhere else an `any` is fixed or carries an eslint-disable comment saying why.
 * - Every eslint-disable comment names a rule that fires on its line: one that does not is an error.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/*', '!src/', '!src/**', '!jobs/', '!jobs/**', '!entities/', '!entities/**', '!test/', '!test/**'] },
  { ignores: ['**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': 'off',
    },
  },
  {
    files: ['test/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Where `any` is the honest type. Zod's internals (`_zod.def`) and the resolver and input classes built at
    // run time for type-graphql have no static type; an operation of any input, body and answer (the
    // registry's element type) is `Operation<any, ...>` because its handler's parameter types vary; a raw SQL
    // row is `Record<string, any>` until the stores give their rows types.
    files: [
      // zod internals and run-time classes
      'src/graphql/zod-graphql.ts', 'src/mcp/tools.ts', 'src/shared/field-selection.ts', 'src/rest/openapi.ts',
      // operations of any input and answer
      'src/operations/operation.ts', 'src/operations/runner.ts', 'src/operations/grant-text.ts', 'src/operations/feature-module.ts',
      'src/console/console-deps.ts', 'src/console/page-context.ts',
      // raw SQL rows
      'src/billing/*.ts', 'src/requests/requests.store.ts', 'src/records/record-lists.ts',
      'src/rest/example-ids.ts', 'src/rest/example-ids.store.ts', 'src/events/events.store.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
