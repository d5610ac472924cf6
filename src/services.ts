/**
 * What a Herald process is made of: the store, the domain services and what
 * they share. `createServices` (app.ts) builds it; the server's routes, the
 * engine and the admin commands take it. Its own file, so that what uses it
 * does not import the composition root that builds it.
 */
import type { Config } from './config.ts';
import type { Store } from './db/index.ts';
import type { Accounts } from './domain/accounts.ts';
import type { Approvals } from './domain/approvals/approvals.ts';
import type { Channels } from './domain/channels.ts';
import type { Comments } from './domain/approvals/comments.ts';
import type { Connections } from './domain/connections.ts';
import type { CsvPosts } from './domain/csv/csv-posts.ts';
import type { Customers } from './domain/customers.ts';
import type { Events } from './domain/events.ts';
import type { Feeds } from './domain/feeds/feeds.ts';
import type { Idempotency } from './domain/idempotency.ts';
import type { Media } from './domain/media.ts';
import type { NetworkReads } from './domain/network-reads.ts';
import type { Notifications } from './domain/notifications.ts';
import type { OAuthServer } from './domain/oauth.ts';
import type { People } from './domain/people.ts';
import type { SingleSignOn } from './domain/sso.ts';
import type { Posts } from './domain/posts/posts.ts';
import type { PreviewLinks } from './domain/approvals/preview-links.ts';
import type { PublishProgress } from './domain/posts/publish-progress.ts';
import type { RateLimiter } from './domain/rate-limit.ts';
import type { Series } from './domain/series/series.ts';
import type { Templates } from './domain/templates.ts';
import type { Preferences } from './domain/preferences.ts';
import type { PasswordResets } from './domain/password-resets.ts';
import type { Mail } from './mail/mail.ts';
import type { Webhooks } from './domain/webhooks.ts';
import type { DiskWatch } from './lib/disk-space.ts';
import type { Metrics } from './lib/metrics.ts';
import type { OutboundGuard } from './lib/outbound.ts';
import type { MediaStorage } from './media/storage.ts';
import type { NetworkContext, Provider } from './providers/types.ts';
import type { LocalEngine } from './scheduler/local-engine.ts';

export interface Services {
  config: Config;
  store: Store;
  accounts: Accounts;
  /** People, web sessions and invitations. */
  people: People;
  /** Single sign-on: who a provider's person is here, and the owner's choices. */
  sso: SingleSignOn;
  customers: Customers;
  templates: Templates;
  /** Each person's language, zone, week start and clock. */
  preferences: Preferences;
  /** Outgoing e-mail: the outbox, each person's choices, the mails that follow events. */
  mail: Mail;
  /** Single-use password reset links. */
  passwordResets: PasswordResets;
  /** The OAuth2 authorization server for applications. */
  oauth: OAuthServer;
  channels: Channels;
  connections: Connections;
  posts: Posts;
  media: Media;
  storage: MediaStorage;
  idempotency: Idempotency;
  /** What publishes left on the network for their post's next attempt. */
  progress: PublishProgress;
  /** Analytics and recent posts read from the networks, kept a while. */
  reads: NetworkReads;
  rateLimiter: RateLimiter;
  notifications: Notifications;
  /** Account webhooks and their deliveries. */
  webhooks: Webhooks;
  /** Where post and channel events are announced (recorded as webhook deliveries). */
  events: Events;
  /** Posts by members that wait for an owner's or admin's approval, and the decisions. */
  approvals: Approvals;
  /** The team's comments on posts (and those of preview links' visitors). */
  comments: Comments;
  /** Shareable previews of a post for people without an account. */
  previewLinks: PreviewLinks;
  /** RSS and Atom subscriptions that post their new items (read by every engine's FeedPoller). */
  feeds: Feeds;
  /** Repeating posts (their occurrences are created by every engine's SeriesExtender). */
  series: Series;
  /** CSV import (checked whole, stored in one go, idempotent) and export of posts. */
  csv: CsvPosts;
  outbound: OutboundGuard;
  /** How adapters reach their network: base URLs, app credentials, HTTP through the guard. */
  network: (provider: Provider, signal?: AbortSignal) => NetworkContext;
  /** The engine of this process, if one runs here: woken when work is due, asked when it last looked (GET /api/ready). */
  localEngine: LocalEngine;
  /** What this process counts, for Prometheus (GET /api/metrics, HERALD_METRICS_PORT). */
  metrics: Metrics;
  /** Undefined when this process's secret opens what the store sealed, else what is wrong and what to do (refused at start, reported by /api/ready). */
  secretMismatch: () => Promise<string | undefined>;
  /** The data folder's disk: free space, and writes that failed for lack of it (reported by /api/ready). */
  disk: DiskWatch;
  close(): Promise<void>;
}
