/** The account's webhooks (/webhooks): Herald POSTs signed events about posts and channels to a URL. */
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../contract/webhooks.ts';
import type { WebhookDelivery } from '../../sdk/index.ts';
import type { Command } from '../command.ts';
import { list, positional, str, UsageError } from '../command.ts';
import { localDate, table, type Styles } from '../output.ts';
import { clientFor, requireSession } from '../session.ts';

const EVENTS = WEBHOOK_EVENTS.join(', ');

function isEvent(name: string): name is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(name);
}

const listWebhooks: Command = {
  name: 'webhooks list',
  summary: "the account's webhooks",
  help: `Usage: herald webhooks list

Example:
  herald webhooks list --json`,
  async run({ config, out }) {
    const hooks = await clientFor(requireSession(config)).webhooks();
    out.result(hooks, (rows) =>
      rows.length === 0
        ? 'No webhooks yet: herald webhooks create --url https://example.com/hook --event post.published'
        : table(
            ['ID', 'NAME', 'URL', 'EVENTS', 'STATUS'],
            rows.map((h) => [h.id, h.name ?? '-', h.url, h.events.join(','), h.disabled ? 'disabled' : 'active']),
            out.style,
          ),
    );
  },
};

const createWebhook: Command = {
  name: 'webhooks create',
  summary: 'have events POSTed to a URL',
  help: `Usage: herald webhooks create --url URL --event EVENT [--event EVENT ...] [--name NAME]

Events: ${EVENTS}.
Deliveries are signed (Standard Webhooks); the signing secret is printed once.

Options:
  --url URL               where Herald POSTs the events (a public http(s) address)
  --event EVENT           an event to receive (repeat, or a,b)
  --name NAME             a label
  --idempotency-key KEY   a repeat with the same key creates nothing new
  --json                  the answer as JSON

Example:
  herald webhooks create --url https://example.com/hook --event post.published --event post.failed`,
  options: { url: { type: 'string' }, event: { type: 'string', multiple: true }, name: { type: 'string' }, 'idempotency-key': { type: 'string' } },
  async run(invocation) {
    const url = str(invocation, 'url');
    const events = list(invocation, 'event');
    if (!url) throw new UsageError('give the --url to call');
    if (events.length === 0) throw new UsageError(`give at least one --event (${EVENTS})`);
    const unknown = events.filter((e) => !isEvent(e));
    if (unknown.length > 0) throw new UsageError(`unknown --event ${unknown.join(', ')} (the events are ${EVENTS})`);
    const hook = await clientFor(requireSession(invocation.config)).createWebhook(
      { url, events: events.filter(isEvent), name: str(invocation, 'name') },
      { idempotencyKey: str(invocation, 'idempotency-key') },
    );
    invocation.out.result(hook, (h) =>
      [`Created webhook ${h.id} for ${h.url} (${h.events.join(', ')})`, `  signing secret: ${h.secret}   (shown once; keep it)`].join('\n'),
    );
  },
};

const deleteWebhook: Command = {
  name: 'webhooks delete',
  summary: 'remove a webhook',
  help: `Usage: herald webhooks delete <webhook-id>

Example:
  herald webhooks delete wh_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the webhook id');
    const answer = await clientFor(requireSession(invocation.config)).deleteWebhook(id);
    invocation.out.result(answer, () => `Deleted webhook ${id}.`);
  },
};

function deliveryState(d: WebhookDelivery, style: Styles): string {
  if (d.state === 'delivered') return style.green(d.state);
  if (d.state === 'failed') return style.red(d.state);
  return style.yellow(d.state);
}

const deliveries: Command = {
  name: 'webhooks deliveries',
  summary: "a webhook's deliveries, newest first, with their answers",
  help: `Usage: herald webhooks deliveries <webhook-id> [--page N]

Example:
  herald webhooks deliveries wh_123`,
  options: { page: { type: 'string' } },
  async run(invocation) {
    const id = positional(invocation, 0, 'the webhook id');
    const page = Number(str(invocation, 'page') ?? 0);
    if (!Number.isInteger(page) || page < 0) throw new UsageError('--page must be a whole number from 0');
    const answer = await clientFor(requireSession(invocation.config)).webhookDeliveries(id, page);
    const { style } = invocation.out;
    invocation.out.result(answer, ({ deliveries: rows, hasMore }) =>
      rows.length === 0
        ? 'No deliveries yet.'
        : [
            table(
              ['ID', 'EVENT', 'STATE', 'ATTEMPTS', 'LAST ANSWER', 'CREATED'],
              rows.map((d) => [
                d.id,
                d.event,
                deliveryState(d, style),
                String(d.attempts),
                d.lastStatus !== null ? String(d.lastStatus) : (d.lastError ?? '-'),
                localDate(d.createdAt),
              ]),
              style,
            ),
            ...(hasMore ? [`More: herald webhooks deliveries ${id} --page ${page + 1}`] : []),
          ].join('\n'),
    );
  },
};

const testWebhook: Command = {
  name: 'webhooks test',
  summary: 'send a ping event to a webhook',
  help: `Usage: herald webhooks test <webhook-id>

Sends a "ping" event; follow it with "herald webhooks deliveries <id>".

Example:
  herald webhooks test wh_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the webhook id');
    const delivery = await clientFor(requireSession(invocation.config)).testWebhook(id);
    invocation.out.result(delivery, (d) => `Ping queued as delivery ${d.id}; see: herald webhooks deliveries ${id}`);
  },
};

export const webhookCommands = [listWebhooks, createWebhook, deleteWebhook, deliveries, testWebhook];
