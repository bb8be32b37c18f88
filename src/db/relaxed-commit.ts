/**
 * A FROM item that makes the statement's own transaction commit without waiting for its WAL flush
 * (`synchronous_commit` off, for that transaction only). Only for a row whose loss in a database crash
 * is harmless or repaired: the next durable commit of the service flushes it anyway, since the WAL is
 * written in order. Used in a statement as `... FROM ${relaxedCommit} ...`.
 */
export const relaxedCommit = `(SELECT set_config('synchronous_commit', 'off', true)) AS relaxed`;
