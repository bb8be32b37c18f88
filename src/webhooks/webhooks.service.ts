import type { DataSource } from 'typeorm';
import type { JobQueue } from '../../jobs/queue/types';
import type { AppConfig } from '../config/config';
import type { SecretBox } from '../security/secret-box';

/** Signed webhook registration and delivery. */
export class WebhooksService {
  constructor(readonly ds: DataSource, readonly box: SecretBox, readonly queue: JobQueue, readonly config: AppConfig) {}
}
