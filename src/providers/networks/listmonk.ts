/**
 * listmonk, the self-hosted newsletter: a post is an email campaign to one list.
 * The user gives their instance's address and an API user with its token
 * (Admin → Users, type "API"); Herald creates the campaign, then starts it.
 *
 * Starting a campaign emails every subscriber, so a campaign is never created
 * twice: its id is kept in the item's progress as soon as listmonk answers, a
 * retry starts the kept campaign (only while it is still a draft), and after an
 * unknown outcome the campaign is looked up by its unique name.
 */
import { z } from 'zod';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'listmonk';
const MAX_SUBJECT = 5000;
/** The progress key under which the campaign an item created is kept. */
const CAMPAIGN_KEY = 'campaign';
/** listmonk's answer to starting a campaign that already runs (or ran). */
const ALREADY_STARTED = /Only paused campaigns and drafts can be started/i;

const credentials = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'must be the http(s) address of your listmonk, like https://news.example.com' })
    .describe('The address of your listmonk instance, like https://news.example.com'),
  username: z.string().trim().min(1, 'is required: the name of an API user').max(200).describe('The API user (Admin → Users → New, type "API")'),
  token: z
    .string()
    .trim()
    .min(1, 'is required: the token listmonk showed when the API user was created')
    .max(500)
    .describe("The API user's token (shown once when it is created); before listmonk v4, the admin password"),
});

const numericId = (what: string) => z.string().trim().regex(/^\d+$/, `must be a listmonk ${what} id (the "${what}s" tool lists them)`);

const settings = z.object({
  subject: z.string().trim().min(1).max(MAX_SUBJECT).describe('The email subject (listmonk template tags such as {{ .Subscriber.FirstName }} work)'),
  list: numericId('list').describe('The list the campaign is sent to'),
  preview: z.string().max(500).optional().describe('Preheader: the line mail apps show after the subject'),
  template: z
    .union([numericId('template'), z.literal('')])
    .optional()
    .describe('The campaign template; empty or 0 for the default template'),
});

interface Config {
  url: string;
  username: string;
  token: string;
}

interface Campaign {
  id: number;
  uuid: string;
  name: string;
  subject: string;
  status: string;
  created_at?: string;
  sent?: number;
  to_send?: number;
  views?: number;
  clicks?: number;
  bounces?: number;
}

/**
 * listmonk answers {"message"} with the status. A 403 is either credentials it
 * does not know (reconnect) or a role without a permission (an admin must fix it,
 * so the post fails saying which one).
 */
function readAnswer({ ok, status, body }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const message = typeof body === 'object' && body && typeof body.message === 'string' ? body.message : undefined;
  if (status === 403 && message && /^permission denied/i.test(message)) {
    return { kind: 'refused', detail: `${message} — give the API user's role this permission in listmonk (Admin → Users → User roles)` };
  }
  if (status === 403) return { kind: 'auth', detail: message };
  return message ? { detail: message } : undefined;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function base(url: string): string {
  return url.replace(/\/+$/, '');
}

/** One API call with the API user's credentials (Basic works on every listmonk version; no cookies are ever sent). */
async function api<T = any>(ctx: NetworkContext, config: Config, path: string, request: NetworkRequest = {}): Promise<T> {
  const basic = Buffer.from(`${config.username}:${config.token}`).toString('base64');
  const answer = await ctx.http.json<{ data: T }>(`${base(config.url)}/api${path}`, {
    ...request,
    headers: { authorization: `Basic ${basic}`, accept: 'application/json', ...request.headers },
  });
  return answer.data;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Herald's editor writes HTML; plain text becomes paragraphs, with line breaks kept. */
function bodyHtml(content: string): string {
  if (/<[a-z][^>]*>/i.test(content)) return content;
  return content
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== '')
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

/** Images of an email are links to them: Herald's upload host serves them. */
function imagesHtml(media: MediaRef[]): string {
  return media.map((m) => `<p><img src="${escapeHtml(m.url)}" alt="${escapeHtml(m.alt ?? '')}" style="max-width:100%"></p>`).join('\n');
}

/** The preheader mail apps show beside the subject, hidden in the message itself. */
function preheaderHtml(preview: string | undefined): string {
  if (!preview?.trim()) return '';
  return `<div style="display:none;max-height:0;overflow:hidden;opacity:0">${escapeHtml(preview.trim())}</div>\n`;
}

/**
 * listmonk runs a campaign's body as a Go template, so a "{{" in the post would
 * start an action (and fail the campaign, or print something else): each is
 * written as the template action that prints "{{".
 */
function escapeTemplate(html: string): string {
  return html.replace(/\{\{/g, '{{"{{"}}');
}

/** The campaign's name: unique per post item, so an unknown outcome can be looked up by it. */
function campaignName(ctx: PublishContext<Config>): string {
  return `herald-${ctx.item.postId}`;
}

function adminUrl(config: Config, id: number | string): string {
  return `${base(config.url)}/admin/campaigns/${id}`;
}

function result(config: Config, campaign: Pick<Campaign, 'id'>): PublishResult {
  return { releaseId: String(campaign.id), releaseUrl: adminUrl(config, campaign.id) };
}

/**
 * Starts the campaign unless it already left draft. A start that listmonk says
 * came too late (the campaign runs) is the start done by an earlier attempt.
 */
async function start(ctx: NetworkContext, config: Config, campaign: Campaign): Promise<PublishResult> {
  if (campaign.status === 'running' || campaign.status === 'finished' || campaign.status === 'scheduled') return result(config, campaign);
  if (campaign.status === 'cancelled') throw new PublishError('refused', `the campaign ${campaign.id} was cancelled in listmonk; it was not sent again`);
  try {
    await api(ctx, config, `/campaigns/${campaign.id}/status`, { method: 'PUT', json: { status: 'running' } });
  } catch (err) {
    if (!(err instanceof PublishError && err.kind === 'refused' && ALREADY_STARTED.test(err.message))) throw err;
  }
  return result(config, campaign);
}

/** The campaign this item created, from its progress or, failing that, by its name. */
async function campaignOf(ctx: PublishContext<Config>, config: Config): Promise<Campaign | undefined> {
  const kept = await ctx.progress.get(CAMPAIGN_KEY);
  if (kept) {
    try {
      return await api<Campaign>(ctx, config, `/campaigns/${kept}`);
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'refused')
        throw new PublishError('refused', `the campaign ${kept} Herald created was removed from listmonk (${err.message}); it was not created again`);
      throw err;
    }
  }
  const name = campaignName(ctx);
  const found = await api<{ results: Campaign[] }>(ctx, config, '/campaigns', { query: { query: name, per_page: 20 } });
  return found.results.find((c) => c.name === name);
}

export const listmonk: Provider<Config> = {
  identifier: 'listmonk',
  name: NETWORK,
  auth: 'credentials',
  readAnswer,
  credentials,
  connectNote:
    'Create an API user in listmonk (Admin → Users, type "API") whose role may read lists and templates and manage and send campaigns (campaigns:manage, ' +
    'campaigns:send, campaigns:get). Each post is a campaign emailed to the chosen list as soon as it is published.',
  settings,
  rules: {
    // A campaign's body has no limit of its own; the subject is checked by the settings.
    maxLength: 1_000_000,
    maxMedia: 10,
    mediaKinds: ['image'],
    threads: false,
  },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    const config: Config = { url: base(given.url), username: given.username, token: given.token };
    const profile = await api<{ id: number; username: string; name?: string; type?: string }>(ctx, config, '/profile');
    const host = new URL(config.url).host;
    return {
      externalId: `${config.url}#${profile.id}`,
      name: `${profile.name || profile.username} (${host})`,
      profile: profile.username,
      config: { ...config },
    };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = ctx.item.settings as z.infer<typeof settings>;
    const list = settings.shape.list.safeParse(String(s.list ?? ''));
    if (!list.success) throw new PublishError('refused', 'settings.list must be a listmonk list id');

    const kept = await ctx.progress.get(CAMPAIGN_KEY);
    if (kept) {
      // An earlier attempt created the campaign: start that one, never a second.
      const campaign = await campaignOf(ctx, config);
      if (campaign) return start(ctx, config, campaign);
    }
    const template = s.template && s.template !== '0' ? Number(s.template) : undefined;
    const body = escapeTemplate([preheaderHtml(s.preview), bodyHtml(ctx.item.content), imagesHtml(ctx.item.media)].filter(Boolean).join('\n'));
    const created = await api<Campaign>(ctx, config, '/campaigns', {
      method: 'POST',
      json: {
        name: campaignName(ctx),
        subject: String(s.subject ?? ''),
        lists: [Number(list.data)],
        type: 'regular',
        content_type: 'html',
        body,
        messenger: 'email',
        tags: ['herald'],
        ...(template ? { template_id: template } : {}),
      },
    });
    await ctx.progress.set(CAMPAIGN_KEY, String(created.id));
    return start(ctx, config, created);
  },

  /** The campaign by its unique name; one found still a draft is started (that is the part that did not happen). */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const campaign = await campaignOf(ctx, config);
    if (!campaign) return null;
    await ctx.progress.set(CAMPAIGN_KEY, String(campaign.id));
    return start(ctx, config, campaign);
  },

  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    const page = await api<{ results: Campaign[] }>(ctx, config, '/campaigns', { query: { order_by: 'created_at', order: 'desc', per_page: 25 } });
    return page.results.map((c) => ({ id: String(c.id), url: adminUrl(config, c.id), text: c.subject, at: Date.parse(c.created_at ?? '') || undefined }));
  },

  analytics: {
    /** Subscribers of the lists the API user can see, as they stand now. */
    async channel(ctx) {
      const config = configOf(ctx.channel);
      const lists = await api<{ results: { subscriber_count?: number }[] }>(ctx, config, '/lists', { query: { per_page: 'all' } });
      return currentFigures({ Subscribers: lists.results.reduce((sum, l) => sum + (l.subscriber_count ?? 0), 0) });
    },
    /** The campaign's own counters. */
    async post(ctx) {
      const config = configOf(ctx.channel);
      const c = await api<Campaign>(ctx, config, `/campaigns/${encodeURIComponent(ctx.releaseId)}`);
      return currentFigures({ Sent: c.sent, Recipients: c.to_send, Views: c.views, Clicks: c.clicks, Bounces: c.bounces });
    },
  },

  tools: {
    lists: {
      description: 'List the mailing lists (id, name, type, subscribers) for the `list` setting.',
      async run(ctx) {
        const lists = await api<{ results: { id: number; name: string; type: string; subscriber_count?: number }[] }>(ctx, configOf(ctx.channel), '/lists', {
          query: { per_page: 'all' },
        });
        return lists.results.map((l) => ({ id: String(l.id), name: l.name, type: l.type, subscribers: l.subscriber_count ?? null }));
      },
    },
    templates: {
      description: 'List the campaign templates (id, name, default) for the `template` setting.',
      async run(ctx) {
        const templates = await api<{ id: number; name: string; type: string; is_default: boolean }[]>(ctx, configOf(ctx.channel), '/templates');
        return templates.filter((t) => t.type === 'campaign').map((t) => ({ id: String(t.id), name: t.name, isDefault: t.is_default }));
      },
    },
  },
};
