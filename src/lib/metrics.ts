/**
 * What a process of Herald counts, in the Prometheus text format: requests by
 * route and status, publish outcomes by network and class, how late posts went
 * out, webhook deliveries, token refreshes, and (read from the store when
 * scraped) posts by state and the due work nobody has claimed. Each process has
 * its own registry; Prometheus adds the processes up.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The queue as the store sees it, read when Prometheus scrapes. */
export interface QueueFigures {
  /** Live posts (thread items) by state: QUEUE, PUBLISHED, ERROR, DRAFT. */
  byState: Record<string, number>;
  /** Items due now that no worker holds. */
  dueUnclaimed: number;
  /** How long the oldest of them has been due, in seconds (0 without any). */
  oldestDueSeconds: number;
}

export type PublishOutcome = 'published' | 'retryable' | 'refused' | 'unknown' | 'auth';
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';
export type RefreshOutcome = 'renewed' | 'retrying' | 'reconnect';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly publishes: Counter<'network' | 'outcome'>;
  private readonly lateness: Histogram<'network'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly refreshes: Counter<'network' | 'outcome'>;
  /** The store's figures for the scrape under way. */
  private reading?: Promise<QueueFigures>;

  constructor(readQueue: () => Promise<QueueFigures>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'herald_' });
    this.requests = new Histogram({
      name: 'herald_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.publishes = new Counter({
      name: 'herald_publish_attempts_total',
      help: 'Publish attempts by network and outcome (published, or the failure class: retryable, refused, unknown, auth)',
      labelNames: ['network', 'outcome'],
      registers,
    });
    this.lateness = new Histogram({
      name: 'herald_publish_lateness_seconds',
      help: 'How long after its time a post item was sent to its network (first attempts)',
      labelNames: ['network'],
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.deliveries = new Counter({
      name: 'herald_webhook_deliveries_total',
      help: 'Account webhook delivery attempts by outcome (delivered, retrying, failed for good)',
      labelNames: ['outcome'],
      registers,
    });
    this.refreshes = new Counter({
      name: 'herald_token_refreshes_total',
      help: 'Token refreshes by network and outcome (renewed, retrying later, reconnect needed)',
      labelNames: ['network', 'outcome'],
      registers,
    });
    // One read of the store per scrape, shared by the three gauges it feeds.
    const figures = () => (this.reading ??= readQueue());
    new Gauge({
      name: 'herald_posts',
      help: 'Live post items by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const { byState } = await figures();
        this.reset();
        for (const [state, count] of Object.entries(byState)) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'herald_posts_due_unclaimed',
      help: 'Post items due now that no worker holds',
      registers,
      async collect() {
        this.set((await figures()).dueUnclaimed);
      },
    });
    new Gauge({
      name: 'herald_posts_due_oldest_seconds',
      help: 'How long the oldest unclaimed due item has waited, in seconds',
      registers,
      async collect() {
        this.set((await figures()).oldestDueSeconds);
      },
    });
  }

  publish(network: string, outcome: PublishOutcome): void {
    this.publishes.inc({ network, outcome });
  }

  /** A first attempt started `seconds` after the item's time. */
  late(network: string, seconds: number): void {
    this.lateness.observe({ network }, Math.max(0, seconds));
  }

  delivery(outcome: DeliveryOutcome): void {
    this.deliveries.inc({ outcome });
  }

  refresh(network: string, outcome: RefreshOutcome): void {
    this.refreshes.inc({ network, outcome });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    try {
      return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    } finally {
      this.reading = undefined;
    }
  }
}
