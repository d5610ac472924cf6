/**
 * Work that nobody awaits (timer callbacks, fire-and-forget writes). A rejection
 * left unhandled ends a Node process, and with it the API and the engine, so
 * every such task goes through here: its failure is logged and the process
 * carries on; the task's owner decides whether and when to try again.
 */
export function inBackground(what: string, task: () => Promise<unknown>): void {
  void (async () => {
    try {
      await task();
    } catch (err) {
      console.error(`${what}:`, describeError(err));
    }
  })();
}

/** One line for a log: the message, and the driver's code where it has one (SQLITE_FULL, 57P01). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}
