/**
 * What every network adapter provides. One provider is one module: how a channel
 * connects, what settings its posts take, what content it accepts, and how to
 * publish. The publishing engine and the API know providers only through this.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { OutboundGuard } from '../lib/outbound.ts';
import type { AnswerReader } from './adapter-kit/http-failures.ts';
import type { NetworkHttp } from './adapter-kit/network-http.ts';
import type { TextCounting } from './text-counting.ts';

export type MediaKind = 'image' | 'video';

/** What a network accepts of images; media that does not fit is converted before publishing (original kept). */
export interface MediaRequirements {
  /** Accepted image types, e.g. ['image/jpeg', 'image/png']. */
  imageTypes?: string[];
  maxImageBytes?: number;
  /** Longest side in pixels. */
  maxImageSide?: number;
}

export interface ContentRules {
  /** Longest text the network accepts, counted as it counts (see `length`). */
  maxLength: number;
  /** How the network counts text (text-counting.ts); defaults to Unicode code points. */
  counting?: TextCounting;
  maxMedia: number;
  /** Fewest media a post needs (YouTube: its one video); none by default. */
  minMedia?: number;
  mediaKinds: MediaKind[];
  /** Whether value[1..] become replies on the network. Without, only value[0] is published. */
  threads: boolean;
  media?: MediaRequirements;
  /**
   * Rules that depend on the item's place in the thread or on the post's settings
   * (Instagram: the post needs media, its comments take none). Each problem names
   * the item's field it is about and the rule.
   */
  check?(item: RuleItem): { field: 'content' | 'image'; message: string }[];
}

/** What `ContentRules.check` sees of one item of a thread. */
export interface RuleItem {
  content: string;
  /** Each media's type, and its size in pixels where the library knows it. */
  media: { mimeType: string; width?: number | null; height?: number | null }[];
  threadIndex: number;
  /** The post's provider settings (without __type). */
  settings: Record<string, unknown>;
}

export interface MediaRef {
  id: string;
  /** Public URL on the upload host (networks that fetch media themselves use it). */
  url: string;
  mimeType: string;
  size: number;
  width?: number | null;
  height?: number | null;
  /** Seconds, for video. */
  duration?: number | null;
  /** The description for people who cannot see it (alt text), where the person gave one. */
  alt?: string | null;
  /** The bytes, for networks that take uploads. */
  open(): Promise<Readable>;
}

export interface PublishItem {
  postId: string;
  groupId: string;
  content: string;
  media: MediaRef[];
  settings: Record<string, unknown>;
  threadIndex: number;
  /** The whole thread as stored, so a receiver can see where this item stands. */
  thread: { content: string; media: MediaRef[]; delayMinutes: number }[];
  publishAt: Date;
}

/** A channel as its adapter sees it; `Config` is what the adapter stored at connect (its own type, see `Provider<Config>`). */
export interface PublishChannel<Config = Record<string, unknown>> {
  id: string;
  name: string;
  externalId: string;
  config: Config;
}

/** What every adapter call gets from outside: where the network is, the app's credentials, and HTTP. */
export interface NetworkContext {
  /** The network's base URLs (defaults of `Provider.urls`, overridable per server). */
  urls: Record<string, string>;
  /** The server's app credentials for this network (`Provider.appSettings`), e.g. CLIENT_ID. */
  app: Record<string, string>;
  /** HTTP to the network through the outbound guard, with failures classified. */
  http: NetworkHttp;
  outbound: OutboundGuard;
  signal: AbortSignal;
}

export interface PublishContext<Config = Record<string, unknown>> extends NetworkContext {
  channel: PublishChannel<Config>;
  item: PublishItem;
  /** The network's id of the item this one replies to (threads). */
  replyTo?: { releaseId: string };
  /** Stable per item, for networks that de-duplicate on a key. */
  idempotencyKey: string;
  /** What earlier attempts of this item made on the network and left for this one (a container still processing). */
  progress: ItemProgress;
}

/** Values an adapter keeps for one post item across its attempts, by a key of its own. */
export interface ItemProgress {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

export interface PublishResult {
  releaseId: string;
  releaseUrl?: string | null;
  /**
   * The network took the post but finishes it later (TikTok processes and
   * moderates): Herald asks `Provider.followUp` after `afterMs`, and again, until
   * the network says how it ended.
   */
  followUp?: { afterMs: number };
}

/** One figure over time, as GET /analytics answers it: `total` per day (YYYY-MM-DD), or one point for a figure the network gives only as it stands now. */
export interface AnalyticsSeries {
  label: string;
  data: { total: number; date: string }[];
  /** The change of the later half of the period against the earlier half, in percent (0 without an earlier figure). */
  percentageChange: number;
}

/** A post the network lists for the channel (to match a post published by hand). */
export interface RecentPost {
  id: string;
  url: string;
  text?: string;
  /** When it was published (epoch ms), where the network says. */
  at?: number;
}

/** How a post the network was still finishing stands. */
export type FollowUpState =
  | { state: 'done'; releaseId?: string; releaseUrl?: string | null }
  | { state: 'failed'; reason: string }
  | { state: 'waiting'; checkAfterMs?: number };

/**
 * Token fields in a channel's config. `expiresAt` (epoch ms) lets the engine
 * refresh ahead of expiry; a refresh that returns no refresh token keeps the old one.
 */
export interface TokenConfig {
  accessToken?: string;
  refreshToken?: string;
  expiresAt?: number;
}

export interface ConnectResult {
  externalId: string;
  name: string;
  picture?: string | null;
  profile?: string | null;
  /** Stored sealed; handed back to publish as channel.config. */
  config: Record<string, unknown> & TokenConfig;
  /** Shown to the user once, when the channel is added (e.g. a signing secret); not again when the same account is connected again. */
  revealOnce?: Record<string, string>;
  /** Config keys that stay as they were when the same account is connected again (a signing secret its receiver already holds). */
  keepOnReconnect?: string[];
  /** The external id is itself a secret (a webhook URL): only a keyed hash of it is stored, for finding the channel again. */
  externalIdIsSecret?: boolean;
}

/** Starting an OAuth connection: where to send the user, and what to remember until they come back. */
export interface OAuthStart {
  url: string;
  /** Kept sealed with the pending connection and handed to `finish` (e.g. an OAuth 1 request token secret). */
  stash?: Record<string, unknown>;
}

export interface OAuthFlow {
  /** Whether the network takes PKCE (S256); the framework then makes the verifier. */
  pkce?: boolean;
  /** What the person gives before going to the network (Mastodon: their server); the web application asks for it. */
  startOptions?: z.ZodObject;
  /** Parameters the network may send back in the URL fragment instead of the query (MeWe): a page hands them to the server. */
  fragmentParams?: readonly string[];
  /**
   * The URL to send the user to. `options` are the extra query parameters of
   * GET /social/{provider} (e.g. a Mastodon instance).
   */
  start(ctx: NetworkContext & { state: string; redirectUri: string; codeChallenge?: string; options: Record<string, string> }): Promise<OAuthStart>;
  /**
   * The network sent the user back with `query`: exchange it for tokens and return
   * the accounts the user may connect. Several results mean the user picks one
   * (a page, a board, a channel).
   */
  finish(
    ctx: NetworkContext & { query: Record<string, string>; redirectUri: string; codeVerifier?: string; stash: Record<string, unknown> },
  ): Promise<ConnectResult[]>;
}

export interface ProviderTool<Config = Record<string, unknown>> {
  description: string;
  /** The tool acts (sends something) rather than reads: it needs channels:write, not channels:read. */
  acts?: boolean;
  run(ctx: NetworkContext & { channel: PublishChannel<Config>; data: unknown }): Promise<unknown>;
}

/** How hard the engine may push a network, across all workers. */
export interface Pacing {
  /** Publishes in flight at once. */
  concurrent?: number;
  /** At most `count` publishes per `windowMs`, for the whole network (the app's quota). */
  perWindow?: { count: number; windowMs: number };
  /** At most `count` publishes per `windowMs` on one channel (a chat, an account). */
  perChannel?: { count: number; windowMs: number };
}

/**
 * `Config` is the channel config the adapter keeps (what `connect` or OAuth
 * returned, stored sealed): each adapter declares its own, so its methods read
 * typed fields. The registry hands adapters out as `Provider`, whose methods
 * take any config, since a channel's config was made by its own adapter.
 */
/**
 * Connecting by approval: Herald asks the network for a request, the person
 * approves it where the network says (a link, often opened on a phone), and
 * Herald asks until it is approved; the approved request gives the credentials
 * `connect` takes.
 */
export interface ApprovalFlow {
  /** The app settings the flow needs besides the network's own (it is offered only with them). */
  settings: string[];
  start(ctx: NetworkContext): Promise<{ id: string; approvalUrl: string }>;
  check(
    ctx: NetworkContext,
    id: string,
  ): Promise<{ status: 'pending' } | { status: 'approved'; credentials: Record<string, unknown> } | { status: 'refused'; detail: string }>;
}

export interface Provider<Config = Record<string, unknown>> {
  identifier: string;
  name: string;
  /** How a channel is connected. */
  auth: 'oauth2' | 'oauth1' | 'credentials';
  /**
   * Base URLs by name with their defaults, e.g. { api: 'https://api.x.com' }.
   * HERALD_<ENV>_<NAME>_URL overrides one (tests point them at a local server).
   */
  urls?: Record<string, string>;
  /** The env prefix of this network's settings; defaults to the identifier in capitals (linkedin-page: LINKEDIN_PAGE). */
  envPrefix?: string;
  /** App credentials the server needs, read from HERALD_<ENV>_<NAME>; without them the network is "not configured". */
  appSettings?: string[];
  /** Optional app settings (read the same way; absent is fine). */
  optionalSettings?: string[];
  /** What the user gives when adding a credentials channel. */
  credentials?: z.ZodObject;
  /** Said plainly where a person connects a channel: what the network allows (Medium takes no new tokens; Skool has no official API). */
  connectNote?: string;
  /** Provider-specific post settings, without __type. Required fields apply to non-drafts. */
  settings: z.ZodObject;
  rules: ContentRules;
  pacing?: Pacing;
  /** Credentials channels: check the credentials with the network and describe the account. */
  connect?(credentials: Record<string, unknown>, ctx: NetworkContext): Promise<ConnectResult>;
  /** OAuth channels. */
  oauth?: OAuthFlow;
  /** Credentials channels the person approves on another device instead of typing credentials (Farcaster's signers). */
  approval?: ApprovalFlow;
  /**
   * A network whose policy asks apps to check their tokens now and then (Twitch:
   * on start and hourly): the engine calls `check` for each connected channel
   * once per process start and every `everyMs`; it throws PublishError('auth')
   * when the network no longer takes the token.
   */
  tokenCheck?: { everyMs: number; check(ctx: NetworkContext & { channel: PublishChannel<Config> }): Promise<void> };
  /** New tokens from the refresh token; throws PublishError('auth') when the network refuses. */
  refresh?(ctx: NetworkContext & { channel: PublishChannel<Config> }): Promise<TokenConfig & Record<string, unknown>>;
  /** How the network reports failures in its answers (error codes, errors inside 2xx bodies); the common rules of `http-failures.ts` decide the rest. */
  readAnswer?: AnswerReader;
  publish(ctx: PublishContext<Config>): Promise<PublishResult>;
  /**
   * After an unknown outcome (timeout after sending): look on the network for the
   * item (by idempotency key or among recent posts). null: certainly not there.
   */
  findPublished?(ctx: PublishContext<Config>): Promise<PublishResult | null>;
  /** The figures the network reports, for the channel over the last `days` days and for one published post. */
  analytics?: {
    channel?(ctx: NetworkContext & { channel: PublishChannel<Config>; days: number }): Promise<AnalyticsSeries[]>;
    post?(ctx: NetworkContext & { channel: PublishChannel<Config>; releaseId: string; days: number }): Promise<AnalyticsSeries[]>;
  };
  /** The channel's recent posts on the network, newest first (GET /posts/{id}/missing matches them). */
  recentPosts?(ctx: NetworkContext & { channel: PublishChannel<Config> }): Promise<RecentPost[]>;
  /** A post published with `followUp`: how the network says it stands now (`releaseId` is what publish returned). */
  followUp?(ctx: NetworkContext & { channel: PublishChannel<Config>; releaseId: string }): Promise<FollowUpState>;
  /**
   * The network drops a repeat of the same publish (the adapter sends a key derived
   * from the post item: an idempotency key, a nonce, a fixed record key, the same
   * event id): after an unknown outcome the engine sends again instead of failing.
   * `by` says how, for messages; `withinMs` is how long the network remembers.
   */
  repeatDropped?: { by: string; withinMs?: number };
  tools?: Record<string, ProviderTool<Config>>;
}
