/**
 * A credential a vendor replaced while we used it (a rotated OAuth refresh token): the connector
 * announces it here, and whoever stores connections (the connect feature) seals the new value into the
 * connection it belongs to, so that it outlives this process. Listeners must not throw.
 */
export interface CredentialRotation {
  connector: string;
  baseUrl: string;
  /** The credential's name and its old and new values (never logged). */
  credential: string;
  previous: string;
  next: string;
}

type Listener = (change: CredentialRotation) => Promise<void> | void;

const listeners = new Set<Listener>();

export function onCredentialRotated(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener; waits for them so that the new value is stored before it is relied on. */
export async function credentialRotated(change: CredentialRotation): Promise<void> {
  for (const l of listeners) await Promise.resolve(l(change)).catch(() => undefined);
}
