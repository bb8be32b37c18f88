/** The queue logs retries (warn) and final failures (error). A pino logger fits this shape. */
export interface QueueLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export const consoleQueueLogger: QueueLogger = {
  info: () => undefined,
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};
