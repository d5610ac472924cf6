/**
 * Farcaster casts through Neynar's hosted API (identifier `wrapcast`, a spelling
 * existing clients send; never "fixed"). Two secrets: the server's Neynar API key
 * (HERALD_WRAPCAST_API_KEY, sent as x-api-key) and, per channel, a Neynar-managed
 * signer the person approved; a signer only works with the API key that
 * created it. Herald makes the signer and shows the approval link when it has
 * the app's Farcaster account (HERALD_WRAPCAST_APP_FID and _APP_MNEMONIC);
 * otherwise a signer_uuid is pasted.
 *
 * Media are URL embeds (Herald's upload host serves them); a thread is a chain of
 * replies. Every cast carries an `idem` key derived from the post item, so a
 * repeat after an unknown outcome returns the first cast instead of a second.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { NetworkContext, Provider, PublishChannel } from '../types.ts';
import { PublishError } from '../errors.ts';
import { signKeyRequest } from './farcaster-key-request.ts';

const NETWORK = 'Farcaster';
/** Bytes of UTF-8 a cast's text may hold (a "long cast"; 10,000 only for Pro accounts). */
const MAX_TEXT_BYTES = 1024;
/** Neynar's API takes two embeds per cast. */
const MAX_EMBEDS = 2;
/** The protocol's limit on each embed URL. */
const MAX_EMBED_URL_BYTES = 256;

const SIGNER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How long a person has to approve a new signer (Neynar recommends a day). */
const APPROVAL_WINDOW_S = 24 * 60 * 60;

const credentials = z.object({
  signerUuid: z
    .string()
    .trim()
    .regex(SIGNER_UUID, 'must be a signer UUID such as 19d0c5fd-9b33-4a48-a0e2-bc7b0555baec')
    .describe("The signer_uuid that Sign in with Neynar gave for your account, on this server's Neynar app"),
});

const settings = z.object({
  subreddit: z
    .array(
      z.object({
        value: z.object({
          id: z
            .string()
            .trim()
            .regex(/^[a-z0-9-]{1,64}$/, 'must be a Farcaster channel id such as neynar'),
        }),
      }),
    )
    .max(1, 'takes one Farcaster channel: a cast is posted in one channel')
    .optional()
    .describe('The Farcaster channel to cast in (the "channels" tool finds them); empty for none'),
});

interface Config {
  signerUuid: string;
  fid: number;
  username: string;
}

interface Signer {
  signer_uuid: string;
  status: 'generated' | 'pending_approval' | 'approved' | 'revoked';
  fid?: number;
}

interface User {
  fid: number;
  username: string;
  display_name?: string;
  pfp_url?: string;
  follower_count?: number;
  following_count?: number;
}

/**
 * Neynar's errors are {code?, message, property?}. A bad API key is the operator's
 * to fix (reconnecting the channel would not help); a signer that is unknown,
 * revoked or not approved is the person's, so the channel must be connected again.
 */
function readAnswer({ ok, status, body }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const b = typeof body === 'object' && body ? (body as { code?: string; message?: string; property?: string }) : {};
  const detail = b.message ?? b.code;
  if (status === 401) {
    return { kind: 'refused', detail: `${detail ?? 'Unauthorized'} — the server's Neynar API key (HERALD_WRAPCAST_API_KEY) was refused`, code: b.code };
  }
  if (status === 429) return { detail, code: b.code };
  if (status >= 400 && status < 500 && (b.property === 'signer_uuid' || /signer/i.test(`${b.message ?? ''} ${b.code ?? ''}`))) {
    return { kind: 'auth', detail, code: b.code };
  }
  return detail ? { detail, code: b.code } : undefined;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

async function neynar<T = any>(ctx: NetworkContext, path: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, { ...request, headers: { 'x-api-key': ctx.app.API_KEY, accept: 'application/json', ...request.headers } });
}

/** Neynar's recommended 16-character idempotency key, the same for every attempt of one item. */
function idemKey(itemId: string): string {
  return crypto.createHash('sha256').update(`herald-cast:${itemId}`).digest('hex').slice(0, 16);
}

function castUrl(username: string, hash: string): string {
  return `https://farcaster.xyz/${encodeURIComponent(username)}/${hash}`;
}

/** The app's own Farcaster account, which asks people to approve signers (HERALD_WRAPCAST_APP_FID). */
function appFid(ctx: NetworkContext): number {
  const fid = Number(ctx.app.APP_FID);
  if (!Number.isSafeInteger(fid) || fid <= 0) throw new PublishError('refused', 'HERALD_WRAPCAST_APP_FID must be the fid of the app’s Farcaster account');
  return fid;
}

/**
 * A new signer, and the link where the person approves it in the Farcaster app:
 * Neynar makes the signer, Herald signs the key request with the app's custody
 * key (HERALD_WRAPCAST_APP_MNEMONIC) and Neynar registers it.
 */
async function requestSigner(ctx: NetworkContext): Promise<{ id: string; approvalUrl: string }> {
  const fid = appFid(ctx);
  const signer = await neynar<{ signer_uuid: string; public_key: string }>(ctx, '/v2/farcaster/signer', { method: 'POST' });
  const deadline = Math.floor(Date.now() / 1000) + APPROVAL_WINDOW_S;
  let signature: string;
  try {
    signature = signKeyRequest(ctx.app.APP_MNEMONIC, fid, signer.public_key, deadline);
  } catch (err) {
    throw new PublishError('refused', `HERALD_WRAPCAST_APP_MNEMONIC ${(err as Error).message}`);
  }
  const registered = await neynar<{ signer_approval_url?: string }>(ctx, '/v2/farcaster/signer/signed_key', {
    method: 'POST',
    json: { signer_uuid: signer.signer_uuid, app_fid: fid, deadline, signature },
  });
  const link = URL.parse(registered.signer_approval_url ?? '');
  // Shown to the person as a link: only a web address will do.
  if (!link || (link.protocol !== 'https:' && link.protocol !== 'http:')) throw new PublishError('retryable', 'Neynar gave no approval link for the signer');
  return { id: signer.signer_uuid, approvalUrl: link.toString() };
}

function signerProblem(signer: Signer): string | undefined {
  if (signer.status === 'approved') return undefined;
  if (signer.status === 'revoked') return 'this signer was revoked in Farcaster; sign in with Neynar again';
  return `this signer is ${signer.status}: approve it in the Farcaster app first`;
}

export const wrapcast: Provider<Config> = {
  identifier: 'wrapcast',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://api.neynar.com' },
  appSettings: ['API_KEY'],
  optionalSettings: ['CLIENT_ID', 'APP_FID', 'APP_MNEMONIC'],
  readAnswer,
  credentials,
  connectNote:
    'With HERALD_WRAPCAST_APP_FID and HERALD_WRAPCAST_APP_MNEMONIC set, Herald shows a link to approve in the Farcaster app. ' +
    "Otherwise paste a signer_uuid approved on this server's Neynar app: a signer works only with the API key of the app that created it. " +
    "Images are shared as links to Herald's upload host, which must stay reachable.",
  settings,
  rules: {
    maxLength: MAX_TEXT_BYTES,
    counting: 'utf8Bytes',
    maxMedia: MAX_EMBEDS,
    mediaKinds: ['image'],
    threads: true,
  },
  // Neynar's Starter plan: 5 requests a second per endpoint, shared by every channel of this server.
  pacing: { perWindow: { count: 5, windowMs: 1000 } },

  approval: {
    settings: ['APP_FID', 'APP_MNEMONIC'],
    start: requestSigner,
    async check(ctx, id) {
      if (!SIGNER_UUID.test(id)) return { status: 'refused', detail: 'this is not a signer id' };
      const signer = await neynar<Signer>(ctx, '/v2/farcaster/signer', { query: { signer_uuid: id } });
      if (signer.status === 'approved') return { status: 'approved', credentials: { signerUuid: id } };
      if (signer.status === 'revoked') return { status: 'refused', detail: 'the signer was revoked in Farcaster: start again' };
      return { status: 'pending' };
    },
  },

  async connect(input, ctx) {
    const { signerUuid } = credentials.parse(input);
    const signer = await neynar<Signer>(ctx, '/v2/farcaster/signer', { query: { signer_uuid: signerUuid } });
    const problem = signerProblem(signer);
    if (problem || !signer.fid) throw new PublishError('refused', problem ?? 'this signer belongs to no Farcaster account yet');
    const { users } = await neynar<{ users: User[] }>(ctx, '/v2/farcaster/user/bulk', { query: { fids: signer.fid } });
    const user = users[0];
    if (!user) throw new PublishError('refused', `Farcaster has no account ${signer.fid}`);
    const config: Config = { signerUuid, fid: user.fid, username: user.username };
    return {
      externalId: String(user.fid),
      name: user.display_name || user.username,
      picture: user.pfp_url ?? null,
      profile: user.username,
      config: { ...config },
    };
  },

  repeatDropped: { by: 'the cast carries the same idem key, so Neynar returns the first cast', withinMs: 10 * 60_000 },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const embeds = ctx.item.media.map((m) => ({ url: m.url }));
    if (embeds.length > MAX_EMBEDS) throw new PublishError('refused', `Farcaster takes at most ${MAX_EMBEDS} embeds per cast`);
    for (const { url } of embeds) {
      if (Buffer.byteLength(url) > MAX_EMBED_URL_BYTES)
        throw new PublishError(
          'refused',
          `the image link ${url} is over ${MAX_EMBED_URL_BYTES} bytes, which Farcaster does not take; use a shorter upload host`,
        );
    }
    const channel = settings.shape.subreddit.safeParse(ctx.item.settings.subreddit).data?.[0]?.value.id;
    const body: Record<string, unknown> = {
      signer_uuid: config.signerUuid,
      text: ctx.item.content,
      idem: idemKey(ctx.idempotencyKey),
      ...(embeds.length > 0 ? { embeds } : {}),
    };
    // A reply lives where its parent is; only the first cast names the channel.
    if (ctx.replyTo) Object.assign(body, { parent: ctx.replyTo.releaseId, parent_author_fid: config.fid });
    else if (channel) body.channel_id = channel;
    const answer = await neynar<{ success: boolean; cast: { hash: string } }>(ctx, '/v2/farcaster/cast', {
      method: 'POST',
      json: body,
      // Neynar drops a repeat with the same idem, so a server error may be retried.
      repeatable: true,
    });
    const hash = answer?.cast?.hash;
    if (!hash) throw new PublishError('unknown', 'Neynar answered without the cast, so the outcome is unknown. Check the channel before retrying.');
    return { releaseId: hash, releaseUrl: castUrl(config.username, hash) };
  },

  analytics: {
    /** The account's counts as they stand now. */
    async channel(ctx) {
      const { users } = await neynar<{ users: User[] }>(ctx, '/v2/farcaster/user/bulk', { query: { fids: configOf(ctx.channel).fid } });
      return currentFigures({ Followers: users[0]?.follower_count, Following: users[0]?.following_count });
    },
  },

  tools: {
    channels: {
      description: 'Find Farcaster channels by name (data: {"q": "..."}) for the `subreddit` setting: id and name.',
      async run(ctx) {
        const q = String((ctx.data as { q?: unknown })?.q ?? '').trim();
        if (!q) throw new PublishError('refused', 'data.q must name what to look for');
        const found = await neynar<{ channels: { id: string; name: string }[] }>(ctx, '/v2/farcaster/channel/search', { query: { q, limit: 10 } });
        return found.channels.map((c) => ({ id: c.id, name: c.name }));
      },
    },
  },
};
