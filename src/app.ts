/**
 * Wires the store, the domain services and the publishing engine together. The
 * server, the worker and the admin commands all start from here, so they share
 * one configuration and one set of rules.
 */
import path from 'node:path';
import type { Config } from './config.ts';
import { migrate, openStore, type Store } from './db/index.ts';
import { Accounts } from './domain/accounts.ts';
import { Channels } from './domain/channels.ts';
import { Idempotency } from './domain/idempotency.ts';
import { Media } from './domain/media.ts';
import { Notifications } from './domain/notifications.ts';
import { Posts } from './domain/posts.ts';
import { RateLimiter } from './domain/rate-limit.ts';
import { OutboundGuard, type Lookup } from './lib/outbound.ts';
import { createSecretBox, resolveSecret } from './lib/secrets.ts';
import { DiskStorage } from './media/storage.ts';

export interface Services {
  config: Config;
  store: Store;
  accounts: Accounts;
  channels: Channels;
  posts: Posts;
  media: Media;
  storage: DiskStorage;
  idempotency: Idempotency;
  rateLimiter: RateLimiter;
  notifications: Notifications;
  outbound: OutboundGuard;
  /** Tells the local engine that work is due at `at`; the engine replaces this no-op when it runs here. */
  wake: (at: number) => void;
  close(): Promise<void>;
}

export async function createServices(config: Config, options: { lookup?: Lookup } = {}): Promise<Services> {
  const store = openStore(config);
  await migrate(store);
  const box = createSecretBox(resolveSecret(config.secret, config.dataDir));
  const outbound = new OutboundGuard({ allowPrivateHosts: config.allowPrivateHosts, lookup: options.lookup });
  const storage = new DiskStorage(path.join(config.dataDir, 'uploads'));
  const accounts = new Accounts(store.db, box);
  const channels = new Channels(store.db, box, outbound);
  const media = new Media(store.db, storage, config);
  const services: Services = {
    config,
    store,
    accounts,
    channels,
    media,
    storage,
    posts: new Posts(store.db, channels, media, { publicUrl: config.publicUrl, uploadUrl: config.uploadUrl, onQueued: (at) => services.wake(at) }),
    idempotency: new Idempotency(store.db),
    rateLimiter: new RateLimiter(store.db),
    notifications: new Notifications(store.db),
    outbound,
    wake: () => {},
    async close() {
      clearInterval(housekeeping);
      await services.rateLimiter.close();
      await outbound.close();
      await store.close();
    },
  };
  // Expired idempotency answers and old rate windows are dropped now and then.
  const housekeeping = setInterval(() => {
    Promise.all([services.idempotency.prune(), services.rateLimiter.prune()]).catch((err) => console.error('housekeeping failed:', (err as Error).message));
  }, HOUSEKEEPING_MS).unref();
  return services;
}

const HOUSEKEEPING_MS = 10 * 60_000;
