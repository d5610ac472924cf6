/**
 * Reading RSS and Atom subscriptions on their schedule. Every engine looks now
 * and then for feeds due; each is taken with a lease as a reader reaches it
 * (domain/feeds.ts claim, through db/lease.ts), so whichever of several workers
 * gets it reads it and the others pass: one read per feed per interval. A worker that dies while
 * reading leaves the feed to its lease.
 */
import type { Services } from '../services.ts';
import { errorFields, log } from '../lib/log.ts';
import { Periodic } from './periodic.ts';

/** The longest wait between two looks for due feeds (shorter when feeds are read more often than this). */
const LOOK_EVERY_MS = 30_000;
/** Feeds taken per look; the rest wait for the next one. */
const BATCH = 20;
/** Feeds read at once by one engine (each mostly waits on its server). */
const AT_ONCE = 4;

export class FeedPoller extends Periodic {
  constructor(
    private readonly services: Services,
    /** The engine's name: whose lease a feed is under. */
    private readonly worker: string,
    everyMs = Math.min(LOOK_EVERY_MS, services.config.feedPollMs),
  ) {
    super('reading feeds', everyMs, (now) => this.readDue(now));
  }

  /** Reads the feeds due at `now` that this engine manages to claim; resolves to how many it read. */
  private async readDue(now: number): Promise<number> {
    const { feeds } = this.services;
    const due = await feeds.due(now, BATCH);
    let read = 0;
    const next = async (): Promise<void> => {
      for (let id = due.shift(); id !== undefined; id = due.shift()) {
        try {
          const claimed = await feeds.claim(id, this.worker, now);
          if (!claimed) continue;
          await feeds.read(claimed, this.worker, now);
          read++;
        } catch (err) {
          // The store went away mid-read, or a fault of ours: the feed is left to its lease, the others go on.
          log.error({ feed: id, ...errorFields(err) }, 'reading a feed failed unexpectedly');
        }
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, next));
    return read;
  }
}
