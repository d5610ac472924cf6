/**
 * Wires the store, the domain services and the publishing engine together. The
 * server, the worker and the admin commands all start from here, so they share
 * one configuration and one set of rules.
 */
import type { Config } from './config.ts';
import { ensureDatabase, migrate, openStore } from './db/index.ts';
import { Accounts } from './domain/accounts.ts';
import { Customers } from './domain/customers.ts';
import { Templates } from './domain/templates.ts';
import { Preferences } from './domain/preferences.ts';
import { PasswordResets } from './domain/password-resets.ts';
import { Mail } from './mail/mail.ts';
import { MailSender, type MailSenderOptions } from './scheduler/mail-sender.ts';
import { heraldResources, OAuthServer } from './domain/oauth.ts';
import { People } from './domain/people.ts';
import { SingleSignOn } from './domain/sso.ts';
import { Channels } from './domain/channels.ts';
import { Connections } from './domain/connections.ts';
import { Idempotency } from './domain/idempotency.ts';
import { PublishProgress } from './domain/posts/publish-progress.ts';
import { NetworkReads } from './domain/network-reads.ts';
import { Pacing } from './scheduler/pacing.ts';
import { TokenKeeper } from './scheduler/tokens.ts';
import { Engine, type EngineOptions } from './scheduler/engine.ts';
import { WebhookDispatcher, type WebhookDispatcherOptions } from './scheduler/webhook-dispatcher.ts';
import { QUEUE_POLL_MS } from './scheduler/work-loop.ts';
import { Media } from './domain/media.ts';
import { Notifications } from './domain/notifications.ts';
import { Posts } from './domain/posts/posts.ts';
import { CsvPosts } from './domain/csv/csv-posts.ts';
import { Events } from './domain/events.ts';
import { Webhooks } from './domain/webhooks.ts';
import { Approvals } from './domain/approvals/approvals.ts';
import { Comments } from './domain/approvals/comments.ts';
import { PreviewLinks } from './domain/approvals/preview-links.ts';
import { Feeds } from './domain/feeds/feeds.ts';
import { Series } from './domain/series/series.ts';
import { takePostingAllowance } from './domain/posts/posting-allowance.ts';
import { RateLimiter } from './domain/rate-limit.ts';
import { OutboundGuard, type Lookup } from './lib/outbound.ts';
import { createSecretBox, resolveSecret } from './lib/secrets.ts';
import { secretMismatch } from './domain/sealed-values.ts';
import { DiskWatch } from './lib/disk-space.ts';
import { createStorage } from './media/create-storage.ts';
import { networkContext } from './providers/network-settings.ts';
import { announceDue } from './scheduler/due-signal.ts';
import { inBackground } from './lib/background.ts';
import { setLogLevel } from './lib/log.ts';
import { Metrics } from './lib/metrics.ts';
import { queueFigures } from './scheduler/claim.ts';
import type { Provider } from './providers/types.ts';
import { LocalEngine } from './scheduler/local-engine.ts';
import type { Services } from './services.ts';
import type { PostRow } from './db/schema.ts';

export async function createServices(config: Config, options: { lookup?: Lookup } = {}): Promise<Services> {
  setLogLevel(config.logLevel);
  // Every start migrates; on PostgreSQL it creates the database first where it may.
  if (config.databaseUrl) await ensureDatabase(config.databaseUrl);
  const store = openStore(config);
  await migrate(store);
  const box = createSecretBox(resolveSecret(config.secret, config.dataDir));
  const outbound = new OutboundGuard({ allowPrivateHosts: config.allowPrivateHosts, lookup: options.lookup, connectTimeoutMs: config.fetchConnectTimeoutMs });
  const storage = await createStorage(config);
  const accounts = new Accounts(store.db, box, store.changes);
  const network = (provider: Provider, signal: AbortSignal = AbortSignal.timeout(60_000)) => networkContext(config, outbound, provider, signal);
  const webhooks = new Webhooks(store.db, box, outbound, store.changes);
  const mail = new Mail(store.db, box, config.publicUrl, config.mail);
  const events = new Events(webhooks, (tx, accountId, recorded) => mail.onEvents(tx, accountId, recorded));
  const channels = new Channels(store.db, box, network, store.changes, events);
  const media = new Media(store.db, storage, config);
  const notifications = new Notifications(store.db);
  // Approvals, comments and preview links find a post's root through Posts (made just below).
  const root = (accountId: string, id: string): Promise<PostRow> => posts.root(accountId, id);
  const approvals = new Approvals(store.db, channels, notifications, events, { root, onQueued: (at) => announce(at) });
  const comments = new Comments(store.db, root);
  const posts = new Posts(store.db, store.dialect, store.changes, channels, media, {
    publicUrl: config.publicUrl,
    uploadUrl: config.uploadUrl,
    takeAllowance: (accountId) => takePostingAllowance(services, accountId),
    onQueued: (at) => announce(at),
    events,
    approvals,
  });
  // Reads renew tokens as publishing does (one process at a time per channel); made when first needed.
  let tokens: TokenKeeper | undefined;
  const tokenKeeper = () => (tokens ??= new TokenKeeper(services, new Pacing(store, services.rateLimiter), `api-${process.pid}`));
  // Never rewritten with a secret that does not open the store: such a process is refused at start (main.ts).
  if (!(await secretMismatch(store.db, box, config))) await channels.hideSecretExternalIds();
  const services: Services = {
    config,
    store,
    accounts,
    people: new People(store.db, accounts, box),
    sso: new SingleSignOn(store.db, box),
    customers: new Customers(store.db),
    templates: new Templates(store.db),
    preferences: new Preferences(store.db),
    mail,
    passwordResets: new PasswordResets(store.db),
    oauth: new OAuthServer(store.db, heraldResources(config.publicUrl)),
    channels,
    connections: new Connections(store.db, box, config, channels, network),
    media,
    storage,
    posts,
    idempotency: new Idempotency(store.db),
    progress: new PublishProgress(store.db),
    reads: new NetworkReads(store.db, channels, posts, network, tokenKeeper),
    rateLimiter: new RateLimiter(store.db),
    metrics: new Metrics(() => queueFigures(store)),
    notifications,
    webhooks,
    events,
    approvals,
    comments,
    previewLinks: new PreviewLinks(store.db, channels, comments, approvals, notifications, { publicUrl: config.publicUrl, root }),
    feeds: new Feeds(store.db, store.dialect, { posts, channels, media, outbound, notifications, config }, { pollMs: config.feedPollMs }),
    series: new Series(store.db, store.dialect, posts, notifications, events),
    csv: new CsvPosts(store.db, posts, channels, media),
    outbound,
    network,
    localEngine: new LocalEngine(),
    secretMismatch: () => secretMismatch(store.db, box, config),
    disk: new DiskWatch(config.dataDir),
    async close() {
      clearInterval(housekeeping);
      await services.rateLimiter.close();
      await outbound.close();
      await storage.close();
      await store.close();
    },
  };
  // Engines in this process hear of due work directly; those in other processes through the database.
  const announce = (at: number) => {
    services.localEngine.wake(at);
    if (at <= Date.now() + ANNOUNCE_HORIZON_MS) inBackground('could not announce due work', () => announceDue(store, at));
  };
  // Expired idempotency answers, old rate windows, abandoned connections and stale publish progress are dropped now and then.
  const housekeeping = setInterval(() => {
    inBackground('housekeeping failed', () =>
      Promise.all([
        services.idempotency.prune(),
        services.rateLimiter.prune(),
        services.connections.prune(),
        services.webhooks.prune(),
        services.people.prune(),
        services.oauth.prune(),
        services.progress.prune(),
        services.reads.prune(),
        services.mail.prune(),
        services.passwordResets.prune(),
      ]),
    );
  }, HOUSEKEEPING_MS).unref();
  return services;
}

const HOUSEKEEPING_MS = 10 * 60_000;
/** Engines look at the queue at least this often anyway, so only work due sooner is announced. */
const ANNOUNCE_HORIZON_MS = QUEUE_POLL_MS;

/** The background workers of a process: the publishing engine, the account webhook deliveries and the mail outbox, sent wherever posts are published. */
export interface Workers {
  engine?: Engine;
  dispatcher?: WebhookDispatcher;
  /** Sends the mail outbox; none when mail is off. */
  mailer?: MailSender;
  /** Stops both; publishes already sent get `graceMs` to finish. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts the workers this process runs (`false` leaves one out); the one place that wires them. */
export function startWorkers(
  services: Services,
  options: { engine?: EngineOptions | false; webhooks?: WebhookDispatcherOptions | false; mail?: MailSenderOptions | false },
): Workers {
  const engine = options.engine === false ? undefined : new Engine(services, options.engine);
  const dispatcher = options.webhooks === false ? undefined : new WebhookDispatcher(services, options.webhooks);
  // Mail goes out wherever webhooks do, unless told otherwise.
  const mailOptions = options.mail ?? (options.webhooks === false ? false : {});
  const mailer = mailOptions === false || !services.config.mail ? undefined : new MailSender(services, services.config.mail, mailOptions);
  engine?.start();
  dispatcher?.start();
  mailer?.start();
  return {
    engine,
    dispatcher,
    mailer,
    async stop(graceMs) {
      await Promise.all([engine?.stop(graceMs), dispatcher?.stop(graceMs), mailer?.stop(graceMs)]);
    },
  };
}
