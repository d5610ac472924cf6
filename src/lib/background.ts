/**
 * Work that nobody awaits (timer callbacks, fire-and-forget writes). A rejection
 * left unhandled ends a Node process, and with it the API and the engine, so
 * every such task goes through here: its failure is logged and the process
 * carries on; the task's owner decides whether and when to try again.
 */
import { errorFields, log } from './log.ts';
export function inBackground(what: string, task: () => Promise<unknown>): void {
  void (async () => {
    try {
      await task();
    } catch (err) {
      log.error(errorFields(err), what);
    }
  })();
}
