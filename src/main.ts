/** Entry point: `npm start` (role all by default), `npm run worker` (SERVICE_ROLE=worker). */
import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config';
import { startServer } from './server';
import { startupBanner } from './config/banner';

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
  const lines = startupBanner(config, {
    storeKind: running.services.db.kind === 'embedded' ? 'embedded' : 'postgres',
    queueDriver: running.services.queue.driver,
    sandbox: running.sandbox,
  });
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
