/**
 * Connecting a channel through a network's OAuth: GET /social/{provider} starts a
 * pending connection and answers the network's authorization URL; the network
 * sends the user back to /connect/{provider}/callback, where the code becomes
 * tokens and a channel. When the user may connect several accounts (pages,
 * boards), the pending connection waits for their pick.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/schema.ts';
import type { SecretBox } from '../lib/secrets.ts';
import { findProvider } from '../providers/index.ts';
import { networkSettings } from '../providers/network-settings.ts';
import type { ConnectResult, NetworkContext, Provider } from '../providers/types.ts';
import type { Channels } from './channels.ts';
import { connectFailure } from './channels.ts';
import { ApiError, invalidField, notFound } from './errors.ts';
import { isTimeZone } from '../lib/time.ts';

/** How long the user has to finish at the network (and to pick an account). */
export const CONNECT_WINDOW_MS = 15 * 60_000;

interface Pending {
  verifier?: string;
  stash: Record<string, unknown>;
  /** Step 2: the accounts the user may pick from. */
  choices?: ConnectResult[];
  /** The zone of the person connecting (the `timeZone` option): a channel created by this connection starts in it. */
  timeZone?: string;
}

export type Finished =
  | { kind: 'connected'; channelId: string; name: string; provider: Provider }
  | { kind: 'choose'; state: string; provider: Provider; choices: { index: number; name: string; picture: string | null; profile: string | null }[] };

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(48).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export class Connections {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly config: Config,
    private readonly channels: Channels,
    private readonly network: (provider: Provider, signal?: AbortSignal) => NetworkContext,
  ) {}

  redirectUri(provider: Provider): string {
    return `${this.config.publicUrl}/connect/${provider.identifier}/callback`;
  }

  /** The OAuth provider, or a 4xx saying why it cannot be connected through OAuth here. */
  oauthProvider(identifier: string): Provider & { oauth: NonNullable<Provider['oauth']> } {
    const provider = findProvider(identifier);
    if (!provider) throw notFound('Provider', identifier);
    if (!provider.oauth) {
      throw new ApiError(
        'not_oauth',
        `${provider.name} channels connect with credentials, not OAuth: ` +
          `POST /api/public/v1/integrations with {"identifier":"${provider.identifier}","credentials":{...}}`,
        [{ path: 'provider', message: 'connects with credentials' }],
      );
    }
    const { missing } = networkSettings(this.config, provider);
    if (missing.length > 0) {
      throw new ApiError(
        'provider_not_configured',
        `${provider.name} is not configured on this server: set ${missing.join(' and ')} (see README, "Networks")`,
        [{ path: 'provider', message: 'not configured' }],
      );
    }
    return provider as Provider & { oauth: NonNullable<Provider['oauth']> };
  }

  /** Starts a connection for the account; `options` are provider-specific (e.g. a Mastodon instance). */
  async start(accountId: string, identifier: string, startOptions: Record<string, string>): Promise<{ url: string }> {
    const provider = this.oauthProvider(identifier);
    // Herald's own option, not the network's: the zone a new channel starts in (the web app sends the browser's).
    const { timeZone, ...options } = startOptions;
    if (timeZone !== undefined && !isTimeZone(timeZone)) throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin');
    const state = crypto.randomBytes(24).toString('base64url');
    const pkce = provider.oauth.pkce ? pkcePair() : undefined;
    let started;
    try {
      started = await provider.oauth.start({
        ...this.network(provider),
        state,
        redirectUri: this.redirectUri(provider),
        codeChallenge: pkce?.challenge,
        options,
      });
    } catch (err) {
      throw connectFailure(provider, err);
    }
    const now = Date.now();
    const pending: Pending = { verifier: pkce?.verifier, stash: started.stash ?? {}, timeZone };
    await this.db
      .insertInto('connect_requests')
      .values({
        state,
        account_id: accountId,
        provider: provider.identifier,
        data_sealed: this.box.encrypt(JSON.stringify(pending)),
        created_at: now,
        expires_at: now + CONNECT_WINDOW_MS,
      })
      .execute();
    return { url: started.url };
  }

  /** Takes a pending connection: it is used once, and an expired one is deleted when seen. */
  private async take(state: string | undefined, identifier: string): Promise<{ accountId: string; pending: Pending }> {
    if (!state) throw invalidField('state', 'is missing: start again from GET /api/public/v1/social/{provider}');
    const row = await this.db.selectFrom('connect_requests').selectAll().where('state', '=', state).executeTakeFirst();
    if (!row || row.provider !== identifier) throw invalidField('state', 'is unknown or was already used: start connecting again', 'unknown_state');
    await this.db.deleteFrom('connect_requests').where('state', '=', state).execute();
    if (row.expires_at < Date.now()) throw invalidField('state', 'has expired (15 minutes): start connecting again', 'expired_state');
    return { accountId: row.account_id, pending: JSON.parse(this.box.decrypt(row.data_sealed)) };
  }

  /** The network sent the user back. */
  async finish(identifier: string, query: Record<string, string>): Promise<Finished> {
    const provider = this.oauthProvider(identifier);
    const { accountId, pending } = await this.take(query.state ?? query.oauth_token_state, identifier);
    if (query.error) {
      throw new ApiError('connect_denied', `${provider.name} did not grant access: ${query.error_description || query.error}`, [
        { path: 'error', message: query.error },
      ]);
    }
    let results: ConnectResult[];
    try {
      results = await provider.oauth.finish({
        ...this.network(provider),
        query,
        redirectUri: this.redirectUri(provider),
        codeVerifier: pending.verifier,
        stash: pending.stash,
      });
    } catch (err) {
      throw connectFailure(provider, err);
    }
    if (results.length === 0) throw new ApiError('nothing_to_connect', `${provider.name} has no account this login can publish to`);
    if (results.length === 1) return this.connected(accountId, provider, results[0], pending.timeZone);
    // Several accounts: keep them (sealed, with their tokens) until the user picks one.
    const state = crypto.randomBytes(24).toString('base64url');
    const now = Date.now();
    await this.db
      .insertInto('connect_requests')
      .values({
        state,
        account_id: accountId,
        provider: provider.identifier,
        data_sealed: this.box.encrypt(JSON.stringify({ stash: {}, choices: results, timeZone: pending.timeZone } satisfies Pending)),
        created_at: now,
        expires_at: now + CONNECT_WINDOW_MS,
      })
      .execute();
    return {
      kind: 'choose',
      state,
      provider,
      choices: results.map((r, index) => ({ index, name: r.name, picture: r.picture ?? null, profile: r.profile ?? null })),
    };
  }

  /** Step 2: the user picked one of the accounts. */
  async choose(identifier: string, state: string | undefined, index: number): Promise<Finished> {
    const provider = this.oauthProvider(identifier);
    const { accountId, pending } = await this.take(state, identifier);
    const picked = pending.choices?.[index];
    if (!picked) throw invalidField('index', `must be one of the ${pending.choices?.length ?? 0} accounts offered`);
    return this.connected(accountId, provider, picked, pending.timeZone);
  }

  private async connected(accountId: string, provider: Provider, result: ConnectResult, timeZone?: string): Promise<Finished> {
    const { id: channelId } = await this.channels.save(accountId, provider.identifier, result, { newChannelZone: timeZone });
    return { kind: 'connected', channelId, name: result.name, provider };
  }

  /** Drops pending connections nobody finished. */
  async prune(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('connect_requests').where('expires_at', '<', now).execute();
  }
}
