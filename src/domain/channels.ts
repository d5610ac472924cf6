/**
 * Connected channels ("integrations"): adding, listing, changing and removing
 * them, and the next free posting slot. Always scoped to one account.
 */
import type { Kysely } from 'kysely';
import type { ChannelRow, Database } from '../db/schema.ts';
import { hotQuery } from '../db/hot-query.ts';
import { tables, type ChangeSignal } from '../db/changes.ts';
import { ReadCache } from '../db/read-cache.ts';
import { newId } from '../lib/ids.ts';
import type { SecretBox } from '../lib/secrets.ts';
import { OutboundRefused } from '../lib/outbound.ts';
import { isTimeZone, localDay, zonedInstant } from '../lib/time.ts';
import { findProvider } from '../providers/index.ts';
import type { ConnectResult, NetworkContext, Provider, PublishChannel, TokenConfig } from '../providers/types.ts';
import { NetworkRefusal, PublishError, type RefusalReason } from '../providers/errors.ts';
import { ApiError, invalidField, invalidFields, notFound } from './errors.ts';
import type { ErrorCode } from './error-codes.ts';
import { validateSettings } from './posts/provider-settings.ts';
import { postEventData, type Events } from './events.ts';
import { accessLapse, EXPIRY_WARNINGS_MS } from './access-expiry.ts';
import { assertNotPublishing, deleteGroups } from './posts/post-queue.ts';

/** Posts not yet out: what removing their channel deletes. */
const WAITING: ('QUEUE' | 'DRAFT')[] = ['QUEUE', 'DRAFT'];

/** A refresh or reconnect without a new refresh token must not wipe the stored one. */
/** A refresh token is used at least this often, so one that lapses when unused (Pinterest: 60 days; Google: six months) never does. */
const USE_REFRESH_TOKEN_EVERY_MS = 7 * 24 * 60 * 60_000;
/** A token that renews itself is renewed this long before Herald's renewal time for it. */
const RENEW_AHEAD_MS = 24 * 60 * 60_000;

/**
 * When a channel's access is renewed in the background, whether or not it
 * publishes: tokens that do not expire never; a refresh token weekly; a token
 * that can only renew itself while it is valid (Instagram Login, Threads) ahead
 * of its renewal time.
 */
export function renewalTime(config: Record<string, unknown>, now = Date.now()): number | null {
  const { expiresAt, refreshToken } = config as TokenConfig;
  if (!expiresAt) return null;
  if (refreshToken) return now + USE_REFRESH_TOKEN_EVERY_MS;
  // Early enough that a token which turns out not to renew leaves its owner the first warning's time to reconnect.
  return Math.min(expiresAt - RENEW_AHEAD_MS, accessLapse(config)! - EXPIRY_WARNINGS_MS[0]);
}

function keepRefreshToken(previous: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  return next.refreshToken ? next : { ...next, ...(previous.refreshToken ? { refreshToken: previous.refreshToken } : {}) };
}

const CONNECT_TIMEOUT_MS = 30_000;
/** Decrypted channel configurations kept in memory (by ciphertext). */
const OPENED_CONFIGS = 1_000;
/** Channel lists kept in memory (by account and customer) until channels or customers change. */
const KEPT_LISTS = 1_000;

/** The error codes of the refusals adapters throw while connecting (their message names the field). */
const REFUSAL_CODES: Record<RefusalReason, ErrorCode> = { invalid: 'invalid_body', address: 'url_refused', refused: 'connect_refused' };

/** A network that refuses the credentials is the user's 400; one that cannot be reached is a 502. */
export function connectFailure(provider: Provider, err: unknown): unknown {
  if (err instanceof NetworkRefusal) return new ApiError(REFUSAL_CODES[err.reason], err.message, [{ path: err.field, message: err.problem }]);
  if (!(err instanceof PublishError)) return err;
  if (err.kind === 'auth' || err.kind === 'refused') {
    return new ApiError('connect_refused', `${provider.name} refused the connection: ${err.message}`, [{ path: 'credentials', message: err.message }]);
  }
  return new ApiError('network_unavailable', `${provider.name} could not be reached to connect the channel: ${err.message}`);
}

export const DEFAULT_POSTING_TIMES = ['09:00', '12:00', '17:00'];

/** Posting times are stored sorted and without repeats. */
function postingTimesJson(times: string[]): string {
  return JSON.stringify([...new Set(times)].sort());
}

export interface ChannelView {
  id: string;
  name: string;
  identifier: string;
  picture: string | null;
  disabled: boolean;
  profile: string | null;
  customer: { id: string; name: string } | null;
  needsReconnect: boolean;
  timeZone: string;
  postingTimes: string[];
  defaultSettings: Record<string, unknown>;
}

/** The columns a channel's public view shows (never its sealed credentials). */
const VIEW_COLUMNS = [
  'channels.id',
  'channels.name',
  'channels.provider',
  'channels.picture',
  'channels.disabled',
  'channels.profile',
  'channels.customer_id',
  'channels.needs_reconnect',
  'channels.time_zone',
  'channels.posting_times',
  'channels.default_settings',
] as const;

type ViewColumn = (typeof VIEW_COLUMNS)[number] extends `channels.${infer C}` ? C : never;
type ChannelWithCustomer = Pick<ChannelRow, ViewColumn> & { customer_name: string | null };

function view(row: ChannelWithCustomer): ChannelView {
  return {
    id: row.id,
    name: row.name,
    identifier: row.provider,
    picture: row.picture,
    disabled: row.disabled === 1,
    profile: row.profile,
    customer: row.customer_id ? { id: row.customer_id, name: row.customer_name ?? '' } : null,
    needsReconnect: row.needs_reconnect === 1,
    timeZone: row.time_zone,
    postingTimes: JSON.parse(row.posting_times),
    defaultSettings: JSON.parse(row.default_settings),
  };
}

export class Channels {
  private readonly opened = new Map<string, string>();
  /** GET /integrations is called by every client at start and often after: compiled once, kept until a change. */
  private readonly listAll;
  private readonly listOfCustomer;
  private readonly lists: ReadCache<string>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    /** How adapters reach their network (base URLs, app credentials, HTTP). */
    private readonly network: (provider: Provider, signal?: AbortSignal) => NetworkContext,
    changes: ChangeSignal,
    private readonly events?: Events,
  ) {
    this.lists = new ReadCache(changes, tables('channels', 'customers'), { entries: KEPT_LISTS });
    const listed = (account: string) => this.scoped(account).select(VIEW_COLUMNS);
    this.listAll = hotQuery<{ account: string }, ChannelWithCustomer>(db, ['account'], (p) => listed(p.account).orderBy('channels.created_at'));
    this.listOfCustomer = hotQuery<{ account: string; customer: string }, ChannelWithCustomer>(db, ['account', 'customer'], (p) =>
      listed(p.account).where('channels.customer_id', '=', p.customer).orderBy('channels.created_at'),
    );
  }

  /** The account's live channels with their customer's name; callers pick the other columns. */
  private scoped(accountId: string) {
    return this.db
      .selectFrom('channels')
      .leftJoin('customers', 'customers.id', 'channels.customer_id')
      .select('customers.name as customer_name')
      .where('channels.account_id', '=', accountId)
      .where('channels.deleted_at', 'is', null);
  }

  private base(accountId: string) {
    return this.scoped(accountId).selectAll('channels');
  }

  /** GET /integrations: the list as JSON text, kept serialised since it is asked for far more often than it changes. */
  async listJson(accountId: string, customerId?: string): Promise<string> {
    return this.lists.get(`${accountId}\u0000${customerId ?? ''}`, async () => {
      const rows = customerId ? await this.listOfCustomer({ account: accountId, customer: customerId }) : await this.listAll({ account: accountId });
      return JSON.stringify(rows.map(view) satisfies ChannelView[]);
    });
  }

  async row(accountId: string, id: string): Promise<ChannelRow & { customer_name: string | null }> {
    const row = await this.base(accountId).where('channels.id', '=', id).executeTakeFirst();
    if (!row) throw notFound('Channel', id);
    return row;
  }

  async get(accountId: string, id: string): Promise<ChannelView> {
    return view(await this.row(accountId, id));
  }

  /** Channel rows by id for one account; ids that are not there are simply absent. */
  async rowsById(accountId: string, ids: string[]): Promise<Map<string, ChannelRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.base(accountId).where('channels.id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  providerOrUndefined(row: ChannelRow): Provider | undefined {
    return findProvider(row.provider);
  }

  provider(row: ChannelRow): Provider {
    const provider = findProvider(row.provider);
    if (!provider) throw new ApiError('provider_unavailable', `Channel ${row.id} uses provider "${row.provider}", which this server does not have`);
    return provider;
  }

  /** What an adapter sees of a channel: its decrypted configuration (a fresh copy each time). */
  publishView(row: ChannelRow): PublishChannel {
    return { id: row.id, name: row.name, externalId: row.external_id, config: JSON.parse(this.openConfig(row.config_sealed)) };
  }

  /**
   * The engine opens a channel's sealed configuration for every post; the same
   * ciphertext always opens to the same text, so recent ones are remembered.
   */
  private openConfig(sealed: string): string {
    let text = this.opened.get(sealed);
    if (text === undefined) {
      text = this.box.decrypt(sealed);
      if (this.opened.size >= OPENED_CONFIGS) this.opened.delete(this.opened.keys().next().value!);
      this.opened.set(sealed, text);
    }
    return text;
  }

  private async checkCustomer(accountId: string, customerId: string | null | undefined, path: string): Promise<void> {
    if (!customerId) return;
    const found = await this.db.selectFrom('customers').select('id').where('account_id', '=', accountId).where('id', '=', customerId).executeTakeFirst();
    if (!found)
      throw new ApiError('not_found', `${path}: customer ${JSON.stringify(customerId)} does not exist in this account`, [
        { path, message: 'no such customer in this account' },
      ]);
  }

  /**
   * Adds a channel of a credentials provider (webhook, later Bluesky, Telegram...).
   * Connecting again with the same network account updates that channel.
   */
  async addWithCredentials(
    accountId: string,
    input: { identifier: string; name?: string; credentials: Record<string, unknown>; timeZone?: string; postingTimes?: string[]; customer?: string },
  ): Promise<{ channel: ChannelView; revealOnce?: Record<string, string> }> {
    const provider = findProvider(input.identifier);
    if (!provider) throw invalidField('identifier', `unknown provider "${input.identifier}"`);
    if (provider.auth !== 'credentials' || !provider.connect || !provider.credentials) {
      throw invalidField('identifier', `${provider.name} channels are connected through OAuth: GET /api/public/v1/social/${provider.identifier}`);
    }
    const parsed = provider.credentials.safeParse(input.credentials);
    if (!parsed.success) {
      throw invalidFields(parsed.error.issues.map((i) => ({ path: ['credentials', ...i.path].join('.'), message: i.message })));
    }
    if (input.timeZone !== undefined && !isTimeZone(input.timeZone)) throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin');
    await this.checkCustomer(accountId, input.customer, 'customer');
    let connected;
    try {
      connected = await provider.connect(parsed.data, this.network(provider, AbortSignal.timeout(CONNECT_TIMEOUT_MS)));
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidField('credentials.url', err.reason.replace(/^credentials\.url /, ''), 'url_refused');
      throw connectFailure(provider, err);
    }
    const { id, created } = await this.save(accountId, provider.identifier, connected, input);
    return { channel: await this.get(accountId, id), revealOnce: created ? connected.revealOnce : undefined };
  }

  /** Starts connecting by approval: the network's request, and the link where the person approves it. */
  async startApproval(identifier: string): Promise<{ id: string; approvalUrl: string }> {
    const provider = this.approvalProvider(identifier);
    try {
      return await provider.approval.start(this.network(provider, AbortSignal.timeout(CONNECT_TIMEOUT_MS)));
    } catch (err) {
      throw connectFailure(provider, err);
    }
  }

  /** Asks whether the request was approved; once it is, the channel is connected (again, if it was). */
  async checkApproval(accountId: string, identifier: string, id: string): Promise<{ status: 'pending' | 'approved'; channel: ChannelView | null }> {
    const provider = this.approvalProvider(identifier);
    let state;
    try {
      state = await provider.approval.check(this.network(provider, AbortSignal.timeout(CONNECT_TIMEOUT_MS)), id);
    } catch (err) {
      throw connectFailure(provider, err);
    }
    if (state.status === 'refused')
      throw new ApiError('connect_refused', `${provider.name} did not approve the connection: ${state.detail}`, [{ path: 'id', message: state.detail }]);
    if (state.status === 'pending') return { status: 'pending', channel: null };
    const { channel } = await this.addWithCredentials(accountId, { identifier, credentials: state.credentials });
    return { status: 'approved', channel };
  }

  private approvalProvider(identifier: string): Provider & { approval: NonNullable<Provider['approval']> } {
    const provider = findProvider(identifier);
    if (!provider?.approval) throw invalidField('provider', `${provider?.name ?? `"${identifier}"`} is not connected by approval`, 'invalid_params');
    const { app } = this.network(provider);
    const missing = provider.approval.settings.filter((name) => !app[name]);
    if (missing.length > 0)
      throw invalidField('provider', `${provider.name}'s approval needs this server's settings ${missing.join(', ')}`, 'provider_not_configured');
    return provider as Provider & { approval: NonNullable<Provider['approval']> };
  }

  /**
   * Stores a connected network account as a channel. Connecting the same network
   * account again updates its channel; a refresh token the network did not send
   * again is kept.
   */
  async save(
    accountId: string,
    providerId: string,
    connected: ConnectResult,
    /** newChannelZone: the zone a channel created here starts in; unlike timeZone it leaves an existing channel's alone. */
    input: { name?: string; timeZone?: string; newChannelZone?: string; postingTimes?: string[]; customer?: string } = {},
  ): Promise<{ id: string; created: boolean }> {
    const now = Date.now();
    const externalId = connected.externalIdIsSecret ? this.secretExternalId(providerId, connected.externalId) : connected.externalId;
    const existing = await this.db
      .selectFrom('channels')
      .select(['id', 'config_sealed'])
      .where('account_id', '=', accountId)
      .where('provider', '=', providerId)
      .where('external_id', '=', externalId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    const previous = existing ? (JSON.parse(this.box.decrypt(existing.config_sealed)) as Record<string, unknown>) : undefined;
    const kept = Object.fromEntries((connected.keepOnReconnect ?? []).filter((key) => previous && key in previous).map((key) => [key, previous![key]]));
    const config = previous ? { ...keepRefreshToken(previous, connected.config), ...kept } : connected.config;
    const fields = {
      name: input.name ?? connected.name,
      picture: connected.picture ?? null,
      profile: connected.profile ?? null,
      config_sealed: this.box.encrypt(JSON.stringify(config)),
      needs_reconnect: 0,
      reconnect_reason: null,
      renew_at: renewalTime(config),
      access_lapses_at: null,
      expiry_warned: null,
    };
    let id: string;
    if (existing) {
      id = existing.id;
      await this.db
        .updateTable('channels')
        .set({
          ...fields,
          ...(input.timeZone ? { time_zone: input.timeZone } : {}),
          ...(input.postingTimes ? { posting_times: postingTimesJson(input.postingTimes) } : {}),
          ...(input.customer ? { customer_id: input.customer } : {}),
        })
        .where('id', '=', id)
        .execute();
    } else {
      id = newId();
      await this.db
        .insertInto('channels')
        .values({
          id,
          account_id: accountId,
          provider: providerId,
          external_id: externalId,
          customer_id: input.customer ?? null,
          time_zone: input.timeZone ?? input.newChannelZone ?? 'UTC',
          posting_times: postingTimesJson(input.postingTimes ?? DEFAULT_POSTING_TIMES),
          default_settings: '{}',
          disabled: 0,
          created_at: now,
          deleted_at: null,
          ...fields,
        })
        .execute();
    }
    return { id, created: !existing };
  }

  /** What is stored for an external id that is a secret (the URL itself stays only in the sealed config). */
  private secretExternalId(providerId: string, externalId: string): string {
    return `hmac:${this.box.lookupKey(externalId, `channel external id:${providerId}`)}`;
  }

  /**
   * Webhook channels of an older Herald stored their URL in the clear as the
   * external id; it becomes the keyed hash (the URL is in the sealed config).
   * Runs at start; does nothing once done.
   */
  async hideSecretExternalIds(): Promise<number> {
    const rows = await this.db
      .selectFrom('channels')
      .select(['id', 'provider', 'external_id'])
      .where('provider', '=', 'webhook')
      .where('external_id', 'not like', 'hmac:%')
      .execute();
    for (const row of rows) {
      await this.db
        .updateTable('channels')
        .set({ external_id: this.secretExternalId(row.provider, row.external_id) })
        .where('id', '=', row.id)
        .execute();
    }
    return rows.length;
  }

  /** Stores refreshed tokens (the old refresh token stays when the network sent none). */
  /** Stores renewed tokens; the next renewal is reckoned from `now`, when these were obtained. */
  async saveTokens(id: string, current: Record<string, unknown>, fresh: Record<string, unknown>, now = Date.now()): Promise<Record<string, unknown>> {
    const config = keepRefreshToken(current, { ...current, ...fresh });
    await this.db
      .updateTable('channels')
      .set({ config_sealed: this.box.encrypt(JSON.stringify(config)), renew_at: renewalTime(config, now), access_lapses_at: null, expiry_warned: null })
      .where('id', '=', id)
      .execute();
    return config;
  }

  /** The account's channels whose access Herald cannot renew and which still publish, with when their token lapses. */
  async expiringAccess(accountId: string): Promise<{ id: string; accessExpiresAt: string }[]> {
    const rows = await this.scoped(accountId)
      .select(['channels.id', 'channels.access_lapses_at'])
      .where('channels.access_lapses_at', 'is not', null)
      .where('channels.needs_reconnect', '=', 0)
      .orderBy('channels.access_lapses_at')
      .execute();
    return rows.map((row) => ({ id: row.id, accessExpiresAt: new Date(Number(row.access_lapses_at)).toISOString() }));
  }

  /** The network no longer accepts the channel's tokens: the user must connect it again. */
  async markNeedsReconnect(id: string, reason: string, db: Kysely<Database> = this.db): Promise<void> {
    await db.updateTable('channels').set({ needs_reconnect: 1, reconnect_reason: reason }).where('id', '=', id).execute();
  }

  async update(
    accountId: string,
    id: string,
    input: {
      name?: string;
      timeZone?: string;
      postingTimes?: string[];
      customer?: string | null;
      disabled?: boolean;
      defaultSettings?: Record<string, unknown>;
    },
  ): Promise<ChannelView> {
    const row = await this.row(accountId, id);
    if (input.timeZone !== undefined && !isTimeZone(input.timeZone)) throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin');
    await this.checkCustomer(accountId, input.customer, 'customer');
    const set: Partial<ChannelRow> = {};
    if (input.name !== undefined) set.name = input.name;
    if (input.timeZone !== undefined) set.time_zone = input.timeZone;
    if (input.postingTimes !== undefined) set.posting_times = postingTimesJson(input.postingTimes);
    if (input.customer !== undefined) set.customer_id = input.customer;
    if (input.disabled !== undefined) set.disabled = input.disabled ? 1 : 0;
    if (input.defaultSettings !== undefined) {
      // Defaults may leave required settings out (a post fills them); what they give must fit the network's schema.
      const { value, problems } = validateSettings(this.provider(row), input.defaultSettings, true, 'defaultSettings');
      if (problems.length > 0) throw invalidFields(problems);
      const { __type: _, ...fields } = value;
      set.default_settings = JSON.stringify(fields);
    }
    if (Object.keys(set).length > 0) await this.db.updateTable('channels').set(set).where('id', '=', id).execute();
    return this.get(accountId, id);
  }

  /**
   * Removes a channel and the posts still waiting to go out on it, as deleting
   * each post would: refused (409) while one of them is being sent, and each
   * removed post announced with post.deleted. Published posts stay as history.
   */
  async remove(accountId: string, id: string): Promise<void> {
    const channel = await this.row(accountId, id);
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      const waiting = await tx
        .selectFrom('posts')
        .select('group_id')
        .distinct()
        .where('channel_id', '=', id)
        .where('state', 'in', WAITING)
        .where('deleted_at', 'is', null)
        .execute();
      await assertNotPublishing(
        tx,
        waiting.map((r) => r.group_id),
        now,
      );
      await tx.updateTable('channels').set({ deleted_at: now }).where('id', '=', id).execute();
      const deleted = await deleteGroups(tx, { account: accountId, channel: id, states: WAITING }, now);
      const roots = deleted.filter((p) => p.thread_index === 0);
      await this.events?.record(
        tx,
        accountId,
        roots.map((root) => ({ type: 'post.deleted' as const, data: postEventData(root, channel) })),
      );
    });
    this.events?.announce();
  }

  /**
   * The earliest posting time of the channel, after `now`, at whose minute the
   * channel has no post. Posting times are wall-clock times in the channel's zone.
   */
  async findSlot(accountId: string, id: string, now = Date.now()): Promise<number> {
    const channel = await this.row(accountId, id);
    const times: [number, number][] = (JSON.parse(channel.posting_times) as string[]).map((t) => {
      const [h, m] = t.split(':').map(Number);
      return [h, m];
    });
    const horizonDays = 366;
    const taken = new Set(
      (
        await this.db
          .selectFrom('posts')
          .select('publish_at')
          .where('channel_id', '=', id)
          .where('thread_index', '=', 0)
          .where('deleted_at', 'is', null)
          .where('publish_at', '>=', now - 60_000)
          .where('publish_at', '<', now + (horizonDays + 1) * 86_400_000)
          .execute()
      ).map((p) => Math.floor(p.publish_at / 60_000)),
    );
    const [y, mo, d] = localDay(channel.time_zone, now);
    for (let day = 0; day <= horizonDays; day++) {
      const candidates = times.map(([h, m]) => zonedInstant(channel.time_zone, y, mo, d + day, h, m)).sort((a, b) => a - b);
      for (const at of candidates) {
        if (at > now && !taken.has(Math.floor(at / 60_000))) return at;
      }
    }
    throw new ApiError('no_free_slot', `Channel ${id} has no free posting time in the next ${horizonDays} days`);
  }
}
