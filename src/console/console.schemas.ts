/** The console's operations: one-time sign-in links and the MSP key's rotation (docs/architecture.md, Connect sessions and console). */
import { keyedWrite } from '../operations/write-results';
import { z } from '../shared/request';

export const ConsoleLink = z.object({
  url: z.string().openapi({ description: 'Open it in a browser to sign in to the console: once, within 15 minutes. Shown here once; only its hash is kept.' }),
  expires_at: z.string(),
}).strict().openapi('ConsoleLink');

export const RotateMspKeyBody = keyedWrite('RotateMspKeyBody', {});

const KeyInfo = z.object({ id: z.string(), prefix: z.string(), created_at: z.string() }).strict().openapi('MspKeyInfo');

export const RotateMspKeyPreview = z.object({
  dry_run: z.literal(true),
  current: z.array(KeyInfo).openapi({ description: 'The tenant\'s MSP keys in use now; a commit revokes every one of them.' }),
}).strict().openapi('RotateMspKeyPreview');

export const RotateMspKeyResult = z.object({
  dry_run: z.literal(false),
  key: z.string().openapi({ description: 'The new MSP key (`sk_msp_...`). Shown here once; only its hash is kept.' }),
  key_info: KeyInfo,
  revoked: z.array(KeyInfo).openapi({ description: 'The keys that stopped working.' }),
}).strict().openapi('RotateMspKeyResult');

