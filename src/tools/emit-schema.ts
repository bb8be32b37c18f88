/** Writes the checked-in schemas: schema/schema.graphql (SDL) and schema/openapi.json. `npm run schema:emit`. */
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { allOperations } from '../features';
import { domainSdl } from '../graphql/schema';
import { buildOpenApi } from '../rest/openapi';
import { operationExamples, PLACEHOLDER_IDS } from '../rest/examples';
import { projectRoot } from '../shared/project-root';

export const CHECKED_IN_SERVER = 'http://127.0.0.1:3000';

export function emittedSchemas(): { 'schema.graphql': string; 'openapi.json': string } {
  return {
    'schema.graphql': domainSdl(allOperations()),
    'openapi.json': JSON.stringify(buildOpenApi(allOperations(), CHECKED_IN_SERVER, operationExamples(PLACEHOLDER_IDS)), null, 2) + '\n',
  };
}

if (require.main === module) {
  const dir = path.join(projectRoot(), 'schema');
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(emittedSchemas())) fs.writeFileSync(path.join(dir, file), content);
  console.log(`wrote ${dir}/schema.graphql and openapi.json`);
}
