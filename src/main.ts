/** Entry point: `npm start` (role all by default), `npm run worker` (SERVICE_ROLE=worker). */
import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config';
import { startServer } from './server';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const running = await startServer(config);
  const lines = [
    '',
    `MSP integration service ${config.role === 'worker' ? 'worker' : 'listening'} on ${config.publicUrl}`,
    `  store: ${running.services.db.kind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${config.dataDir}` : 'PostgreSQL'}; jobs: ${running.services.queue.driver}`,
  ];
  if (running.sandbox) {
    lines.push(`  sandbox API key: ${running.sandbox.apiKey ?? '(none: set SANDBOX_API_KEY)'}`);
    for (const t of running.sandbox.tenants) lines.push(`  sandbox tenant ${t.slug}: ${t.id}  (MSP key ${t.mspKey})`);
  }
  if (config.adminTokenGenerated) lines.push(`  admin token (GraphQL at /graphql, this run only): ${config.adminToken}`);
  lines.push(`  try: curl -H 'X-API-Key: ${running.sandbox?.apiKey ?? '<key>'}' ${config.publicUrl}/tenants`, '');
  process.stdout.write(lines.join('\n') + '\n');

  const shutdown = (signal: string) => {
    running.services.logger.info({ signal }, 'shutting down');
    running.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
