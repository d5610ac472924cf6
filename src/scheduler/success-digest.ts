/**
 * Successes are good news but not worth one notification each: they are gathered
 * for a few seconds and told per account in one line. Failures are told at once.
 */
import type { Notifications } from '../domain/notifications.ts';
import { inBackground } from '../lib/background.ts';

interface Pending {
  items: { channel: string; content: string; root: string }[];
}

const PREVIEW_CHARS = 60;

function preview(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}

export class SuccessDigest {
  private readonly pending = new Map<string, Pending>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly notifications: Notifications,
    private readonly windowMs: number,
  ) {}

  add(accountId: string, channel: string, content: string, root: string): void {
    const entry = this.pending.get(accountId) ?? { items: [] };
    entry.items.push({ channel, content, root });
    this.pending.set(accountId, entry);
    this.timer ??= setTimeout(() => inBackground('engine: could not record notifications', () => this.flush()), this.windowMs);
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [accountId, { items }] of batches) {
      const [first] = items;
      const text =
        items.length === 1
          ? `Published on ${first.channel}: “${preview(first.content)}”`
          : `${items.length} posts were published, the first on ${first.channel}: “${preview(first.content)}”`;
      await this.notifications.add(accountId, text, items.length === 1 ? `/api/public/v1/posts/${first.root}` : null);
    }
  }
}
