/**
 * The embedded default's generated encryption key, kept outside DATA_DIR: under the user's config
 * directory (`$XDG_CONFIG_HOME`, else `~/.config`), in `msp-integration-service/keys/`, one file per data
 * directory, named by that directory's absolute path. A copy or backup of DATA_DIR then carries the sealed
 * credentials without the key that opens them, while restarts on the same DATA_DIR find their key again.
 * Directory 0700, file 0600. A key an older version left in DATA_DIR/encryption.key is moved out once.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The key file name an older version kept inside DATA_DIR. */
export const LEGACY_KEY_FILE = 'encryption.key';

export class KeyStoreError extends Error {}

/** Where the key of `dataDir` lives. */
export function encryptionKeyPath(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const absolute = path.resolve(dataDir);
  const configHome = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  const id = createHash('sha256').update(absolute).digest('hex').slice(0, 16);
  const label = path.basename(absolute).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '') || 'data';
  return path.join(configHome, 'msp-integration-service', 'keys', `${label}-${id}.key`);
}

export interface LoadedKey {
  key: Buffer;
  file: string;
  /** What happened that an operator should hear of (the key was created, or moved out of DATA_DIR). */
  notice: string | null;
}

function readKey(file: string): Buffer {
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new KeyStoreError(`${file} does not hold a 32-byte base64 key`);
  return key;
}

function writeKey(file: string, key: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(file), 0o700);
  // wx: two processes starting at once never overwrite each other's key.
  fs.writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
}

/** Reads the key of `dataDir`, moving a legacy DATA_DIR/encryption.key out first, or creates one. */
export function loadOrCreateEncryptionKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): LoadedKey {
  const file = encryptionKeyPath(dataDir, env);
  const legacy = path.join(dataDir, LEGACY_KEY_FILE);
  if (fs.existsSync(legacy)) {
    const old = readKey(legacy);
    if (fs.existsSync(file)) {
      if (!readKey(file).equals(old)) {
        throw new KeyStoreError(`${legacy} and ${file} hold different keys: keep the one that opens this database's credentials (move it to ${file}) and remove the other`);
      }
    } else {
      writeKey(file, old);
    }
    fs.rmSync(legacy);
    return { key: old, file, notice: `moved the encryption key out of DATA_DIR (${legacy}) to ${file}; back that file up apart from the data` };
  }
  if (fs.existsSync(file)) {
    fs.chmodSync(file, 0o600);
    return { key: readKey(file), file, notice: null };
  }
  const key = randomBytes(32);
  try {
    writeKey(file, key);
  } catch (err) {
    // Another process of the same DATA_DIR created it first: use that one.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { key: readKey(file), file, notice: null };
    throw new KeyStoreError(`cannot create ${file} (${(err as Error).message}); set ENCRYPTION_KEY instead`);
  }
  return { key, file, notice: `generated an encryption key for ${path.resolve(dataDir)} in ${file}; back it up apart from the data` };
}
