/**
 * GET /api/ready, for load balancers and orchestrators: 200 when this process
 * can serve (the store answers, its schema is the one this code expects, its
 * secret opens what the store sealed, the data folder's disk has room, and,
 * where the process publishes, its engine looked at the queue recently), else
 * 503 naming what is wrong. GET /api/health stays a liveness check.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { pendingMigrations, ping } from '../db/index.ts';
import { deadline } from '../lib/deadline.ts';

/** A store that takes longer than this to answer SELECT 1 is not ready. */
const STORE_TIMEOUT_MS = 2_000;
/** An engine is alive while it looked at its queue within this many of its poll intervals (at least 30 s). */
const MISSED_LOOKS = 3;

type Check = 'ok' | 'not running here' | string;

async function storeCheck(services: Services): Promise<Check> {
  const limit = deadline(STORE_TIMEOUT_MS);
  try {
    const answer = ping(services.store.db);
    const timedOut = new Promise<never>((_, reject) =>
      limit.signal.addEventListener('abort', () => reject(new Error(`no answer within ${STORE_TIMEOUT_MS} ms`)), { once: true }),
    );
    await Promise.race([answer, timedOut]);
    return 'ok';
  } catch (err) {
    return `unreachable: ${(err as Error).message}`;
  } finally {
    limit.clear();
  }
}

async function migrationsCheck(services: Services): Promise<Check> {
  const pending = await pendingMigrations(services.store);
  return pending.length === 0 ? 'ok' : `${pending.length} migration(s) not applied (${pending.join(', ')}): run "herald migrate"`;
}

function engineCheck(services: Services, now = Date.now()): Check {
  const looked = services.localEngine.looked();
  if (!looked) return 'not running here';
  const allowed = Math.max(MISSED_LOOKS * looked.everyMs, 30_000);
  return now - looked.at <= allowed ? 'ok' : `last looked at the queue ${Math.round((now - looked.at) / 1000)} s ago`;
}

export function registerReadiness(app: FastifyInstance, services: Services): void {
  app.get('/api/ready', { schema: { hide: true } }, async (_request, reply) => {
    const store = await storeCheck(services);
    const unknown = (err: unknown) => `unknown: ${(err as Error).message}`;
    const checks = {
      store,
      migrations: store === 'ok' ? await migrationsCheck(services).catch(unknown) : 'unknown: the store does not answer',
      // Checked at start too; a store sealed with another secret can also appear later (a process with another HERALD_SECRET wrote it).
      secret: store === 'ok' ? await services.secretMismatch().then((problem) => problem ?? 'ok', unknown) : 'unknown: the store does not answer',
      disk: await services.disk.check(),
      engine: engineCheck(services),
    };
    const ready = Object.values(checks).every((c) => c === 'ok' || c === 'not running here');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
}
