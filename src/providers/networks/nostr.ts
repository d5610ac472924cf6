/**
 * Nostr: Herald signs kind-1 notes with the user's key and sends each to every
 * relay of the channel (the relays the user gave, else the server's
 * HERALD_NOSTR_RELAYS). A note is published when at least one relay accepts it.
 *
 * The note's created_at is the item's publish time, so a retry re-creates the
 * very same event id: relays answer "duplicate" instead of storing a second
 * note, and after an unknown outcome the relays can be asked for that id.
 */
import { bytesToHex, hexToBytes } from 'nostr-tools/utils';
import { z } from 'zod';
import { decode, neventEncode, npubEncode } from 'nostr-tools/nip19';
import type { Event, EventTemplate } from 'nostr-tools/pure';
import { OutboundRefused } from '../../lib/outbound.ts';
import { checkRelayUrl, queryRelay, sendEvent, type Filter, type RelayOptions, type RelayOutcome } from './nostr-relays.ts';
import type { NetworkContext, Provider, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'Nostr';
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_RELAYS = 10;
/** OK-false prefixes (NIP-01) after which the same event may be accepted later. */
const TRANSIENT_PREFIXES = ['rate-limited:', 'error:'];

/** Signing and checking events (secp256k1), loaded on first use: costly to load, and only Nostr channels need it. */
const loadSigning = () => import('nostr-tools/pure');

/** The 32-byte key from nsec1… (NIP-19) or 64 hex characters; undefined when it is neither. */
function secretKey(input: string): Uint8Array | undefined {
  const text = input.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return hexToBytes(text.toLowerCase());
  if (!text.startsWith('nsec1')) return undefined;
  try {
    const decoded = decode(text);
    return decoded.type === 'nsec' ? decoded.data : undefined;
  } catch {
    return undefined;
  }
}

const credentials = z.object({
  privateKey: z
    .string()
    .refine((key) => secretKey(key) !== undefined, 'must be a Nostr private key: nsec1… or 64 hex characters')
    .describe('The private key (nsec1… or hex) Herald signs notes with'),
  relays: z
    .array(z.string().regex(/^wss?:\/\/\S+$/, 'must be a relay address starting with wss://'))
    .min(1)
    .max(MAX_RELAYS)
    .optional()
    .describe("Relays to publish to; without, the server's relays"),
});

interface NostrConfig {
  privateKey: string;
  relays?: string[];
}

function serverRelays(app: Record<string, string>): string[] {
  return (app.RELAYS ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .slice(0, MAX_RELAYS);
}

function relayOptions(ctx: NetworkContext): RelayOptions {
  const timeout = Number(ctx.app.RELAY_TIMEOUT_MS);
  return { outbound: ctx.outbound, signal: ctx.signal, timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS };
}

/** The channel's relays, each checked against the outbound rules. */
function relaysOf(ctx: NetworkContext, config: { relays?: string[] }): string[] {
  const relays = config.relays?.length ? config.relays : serverRelays(ctx.app);
  if (relays.length === 0) throw new PublishError('refused', 'no relays to publish to: give credentials.relays, or set HERALD_NOSTR_RELAYS on the server');
  return relays.map((relay) => {
    try {
      return checkRelayUrl(relay, ctx.outbound);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new PublishError('refused', `relay ${relay} ${err.reason}`);
      throw err;
    }
  });
}

/** The newest valid event by `author` matching `filter` across the relays; whether any relay answered. */
async function newest(ctx: NetworkContext, relays: string[], filter: Filter, author: string): Promise<{ reachable: boolean; event?: Event; relay?: string }> {
  const answers = await Promise.all(relays.map(async (relay) => ({ relay, ...(await queryRelay(relay, filter, relayOptions(ctx))) })));
  const { verifyEvent } = await loadSigning();
  let best: { event: Event; relay: string } | undefined;
  for (const answer of answers) {
    for (const event of answer.events) {
      // Relays are not trusted: only correctly signed events of this author count.
      if (event.pubkey !== author || !verifyEvent(event)) continue;
      if (!best || event.created_at > best.event.created_at) best = { event, relay: answer.relay };
    }
  }
  return { reachable: answers.some((a) => a.reachable), ...best };
}

/** NIP-10 marked tags for a reply to `parentId` in a thread of notes by `pubkey`. */
async function replyTags(ctx: PublishContext<NostrConfig>, relays: string[], parentId: string, pubkey: string): Promise<string[][]> {
  const found = await newest(ctx, relays, { ids: [parentId] }, pubkey);
  const hint = found.relay ?? relays[0];
  const rootTag = found.event?.tags.find((t) => t[0] === 'e' && t[3] === 'root');
  const pTags = [pubkey, ...(found.event?.tags.filter((t) => t[0] === 'p').map((t) => t[1]) ?? [])];
  const tags: string[][] = [];
  if (rootTag && rootTag[1] !== parentId) {
    tags.push(['e', rootTag[1], rootTag[2] ?? hint, 'root', rootTag[4] ?? pubkey], ['e', parentId, hint, 'reply', pubkey]);
  } else {
    // The parent is the thread's first note (or could not be read back: then it stands as the root).
    tags.push(['e', parentId, hint, 'root', pubkey]);
  }
  for (const p of new Set(pTags)) tags.push(['p', p]);
  return tags;
}

/** The note as it is signed: text, media URLs on their own lines (clients show them inline) with NIP-92 imeta tags. */
async function noteTemplate(ctx: PublishContext<NostrConfig>, relays: string[], pubkey: string): Promise<EventTemplate> {
  const { content, media, publishAt } = ctx.item;
  const tags: string[][] = ctx.replyTo ? await replyTags(ctx, relays, ctx.replyTo.releaseId, pubkey) : [];
  for (const m of media) {
    const imeta = ['imeta', `url ${m.url}`, `m ${m.mimeType}`];
    if (m.width && m.height) imeta.push(`dim ${m.width}x${m.height}`);
    tags.push(imeta);
  }
  const text = [content, ...media.map((m) => m.url)].filter((part) => part.trim() !== '').join('\n');
  return { kind: 1, created_at: Math.floor(publishAt.getTime() / 1000), tags, content: text };
}

function noteUrl(ctx: NetworkContext, id: string, pubkey: string, relays: string[]): string {
  return `${ctx.urls.gateway}/${neventEncode({ id, author: pubkey, relays: relays.slice(0, 2) })}`;
}

/** One failure class for the whole set of relays, none of which accepted the note. */
function relaysFailure(outcomes: RelayOutcome[]): PublishError {
  const summary = outcomes.map((o) => `${o.relay}: ${o.status === 'rejected' ? o.message || 'refused' : `${o.status} (${o.message})`}`).join('; ');
  if (outcomes.some((o) => o.status === 'silent')) {
    return new PublishError('unknown', `No ${NETWORK} relay confirmed the note and some did not answer, so it may have been published (${summary})`);
  }
  const transient = outcomes.some((o) => o.status === 'unreachable' || (o.status === 'rejected' && TRANSIENT_PREFIXES.some((p) => o.message.startsWith(p))));
  if (transient) return new PublishError('retryable', `No ${NETWORK} relay took the note yet (${summary})`);
  return new PublishError('refused', `${NETWORK} relays refused the note (${summary})`);
}

async function keysOf(config: NostrConfig): Promise<{ secret: Uint8Array; pubkey: string }> {
  const secret = hexToBytes(config.privateKey);
  const { getPublicKey } = await loadSigning();
  return { secret, pubkey: getPublicKey(secret) };
}

export const nostr: Provider<NostrConfig> = {
  identifier: 'nostr',
  name: NETWORK,
  auth: 'credentials',
  urls: { gateway: 'https://njump.me' },
  optionalSettings: ['RELAYS', 'RELAY_TIMEOUT_MS'],
  credentials,
  settings: z.object({}),
  // No protocol limit; relays commonly cap content near 8 KB (NIP-11 limitation.max_content_length).
  rules: { maxLength: 8000, maxMedia: 10, mediaKinds: ['image', 'video'], threads: true },

  async connect(input, ctx) {
    const parsed = credentials.parse(input);
    const secret = secretKey(parsed.privateKey)!;
    const { getPublicKey } = await loadSigning();
    const pubkey = getPublicKey(secret);
    const relays = relaysOf(ctx, { relays: parsed.relays });
    const profile = await newest(ctx, relays, { kinds: [0], authors: [pubkey], limit: 1 }, pubkey);
    if (!profile.reachable) throw new PublishError('retryable', `none of the relays could be reached (${relays.join(', ')})`);
    let about: { name?: string; display_name?: string; picture?: string } = {};
    try {
      about = profile.event ? JSON.parse(profile.event.content) : {};
    } catch {
      /* a profile that is not JSON: the key's npub names the channel */
    }
    const npub = npubEncode(pubkey);
    const config: NostrConfig = { privateKey: bytesToHex(secret), ...(parsed.relays ? { relays: parsed.relays } : {}) };
    return {
      externalId: pubkey,
      name: about.display_name || about.name || `${npub.slice(0, 12)}…${npub.slice(-6)}`,
      picture: typeof about.picture === 'string' && /^https:\/\//.test(about.picture) ? about.picture : null,
      profile: npub,
      config: { ...config },
    };
  },

  // The same note has the same event id; relays store an id once.
  repeatDropped: { by: 'the same note has the same event id, which relays store once' },

  async publish(ctx) {
    const config = ctx.channel.config;
    const { secret, pubkey } = await keysOf(config);
    const relays = relaysOf(ctx, config);
    const { finalizeEvent } = await loadSigning();
    const event = finalizeEvent(await noteTemplate(ctx, relays, pubkey), secret);
    const outcomes = await Promise.all(relays.map((relay) => sendEvent(relay, event, relayOptions(ctx))));
    const accepted = outcomes.filter((o) => o.status === 'accepted').map((o) => o.relay);
    if (accepted.length === 0) throw relaysFailure(outcomes);
    return { releaseId: event.id, releaseUrl: noteUrl(ctx, event.id, pubkey, accepted) };
  },

  /** The note's id does not change between tries, so the relays can be asked for it. */
  async findPublished(ctx) {
    const config = ctx.channel.config;
    const { pubkey } = await keysOf(config);
    const relays = relaysOf(ctx, config);
    const { getEventHash } = await loadSigning();
    const id = getEventHash({ ...(await noteTemplate(ctx, relays, pubkey)), pubkey });
    const found = await newest(ctx, relays, { ids: [id] }, pubkey);
    if (found.event) return { releaseId: id, releaseUrl: noteUrl(ctx, id, pubkey, [found.relay!]) };
    if (!found.reachable) throw new PublishError('retryable', 'no relay could be asked whether the note arrived');
    return null;
  },
};
