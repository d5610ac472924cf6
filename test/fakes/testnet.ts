/**
 * "testnet": a small network made for the engine's tests, with everything a real
 * network can throw at the engine: bearer tokens that expire and refresh (with
 * rotating refresh tokens), an idempotency-key lookup after unknown outcomes,
 * replies, and a limit on concurrent publishes. The adapter is an ordinary
 * Provider registered at run time; the fake is a local HTTP server for it.
 */
import { z } from 'zod';
import { registerProvider } from '../../src/providers/index.ts';
import type { Provider } from '../../src/providers/types.ts';
import { startNetworkFake, type NetworkFake } from './network-fake.ts';

export const testnet: Provider = {
  identifier: 'testnet',
  name: 'Testnet',
  auth: 'credentials',
  urls: { api: 'https://api.testnet.invalid' },
  credentials: z.object({ accessToken: z.string(), refreshToken: z.string(), expiresInMs: z.number().int().optional(), account: z.string().default('me') }),
  settings: z.object({}).passthrough(),
  rules: { maxLength: 500, maxMedia: 4, mediaKinds: ['image'], threads: true },
  pacing: { concurrent: 2, perChannel: { count: 10, windowMs: 24 * 60 * 60_000 } },

  async connect(input) {
    const c = input as { accessToken: string; refreshToken: string; expiresInMs?: number; account: string };
    const expiresAt = c.expiresInMs === undefined ? undefined : Date.now() + c.expiresInMs;
    return { externalId: c.account, name: `Testnet ${c.account}`, config: { accessToken: c.accessToken, refreshToken: c.refreshToken, expiresAt } };
  },

  async refresh(ctx) {
    const answer = await ctx.http.json(`${ctx.urls.api}/oauth/token`, {
      form: { grant_type: 'refresh_token', refresh_token: String(ctx.channel.config.refreshToken) },
    });
    return { accessToken: answer.access_token, refreshToken: answer.refresh_token, expiresAt: Date.now() + answer.expires_in * 1000 };
  },

  async publish(ctx) {
    const answer = await ctx.http.json(`${ctx.urls.api}/posts`, {
      headers: { authorization: `Bearer ${ctx.channel.config.accessToken}`, 'idempotency-key': ctx.idempotencyKey },
      json: { text: ctx.item.content, replyTo: ctx.replyTo?.releaseId ?? null },
      timeoutMs: 1_000,
    });
    return { releaseId: answer.id, releaseUrl: `https://testnet.invalid/p/${answer.id}` };
  },

  async findPublished(ctx) {
    const url = `${ctx.urls.api}/posts/by-key/${ctx.idempotencyKey}`;
    const request = { headers: { authorization: `Bearer ${ctx.channel.config.accessToken}` } };
    const response = await ctx.http.send(url, request);
    if (response.status === 404) return null;
    if (!response.ok) throw await ctx.http.failure(url, response, request);
    const found = (await response.json()) as { id: string };
    return { releaseId: found.id, releaseUrl: `https://testnet.invalid/p/${found.id}` };
  },
};

registerProvider(testnet);

export interface TestnetFake extends NetworkFake {
  /** Posts the network holds, by idempotency key. */
  posts: Map<string, { id: string; text: string; replyTo: string | null; at: number }>;
  /** The access token the network accepts now. */
  validToken: string;
  /** Refresh tokens the network still accepts (used ones are revoked: rotation). */
  refreshTokens: Set<string>;
  /** Most publishes the network saw in flight at once. */
  maxInFlight: number;
  /** How long a publish takes on the network. */
  latencyMs: number;
  /** Delay between storing a post and answering (the client may time out meanwhile). */
  answerAfterStoreMs: number;
  /** Whether a refresh returns a new refresh token (and revokes the used one). */
  rotate: boolean;
}

export async function startTestnet(): Promise<TestnetFake> {
  let inFlight = 0;
  let sequence = 0;
  const fake = (await startNetworkFake()) as TestnetFake;
  fake.posts = new Map();
  fake.validToken = 'token-1';
  fake.refreshTokens = new Set(['refresh-1']);
  fake.maxInFlight = 0;
  fake.latencyMs = 0;
  fake.rotate = true;
  fake.answerAfterStoreMs = 0;
  fake.route({
    'POST /posts': async (req) => {
      if (req.headers.authorization !== `Bearer ${fake.validToken}`)
        return { status: 401, body: { error: 'invalid_token', error_description: 'The access token expired' } };
      inFlight++;
      fake.maxInFlight = Math.max(fake.maxInFlight, inFlight);
      try {
        if (fake.latencyMs) await new Promise((r) => setTimeout(r, fake.latencyMs));
        const key = String(req.headers['idempotency-key']);
        const id = `tn-${++sequence}`;
        fake.posts.set(key, { id, text: req.json.text, replyTo: req.json.replyTo, at: Date.now() });
        return { status: 201, body: { id }, delayMs: fake.answerAfterStoreMs };
      } finally {
        inFlight--;
      }
    },
    'GET /posts/by-key/:key': (req) => {
      const post = fake.posts.get(req.params.key);
      return post ? { body: { id: post.id } } : { status: 404, body: { error: 'no such post' } };
    },
    'POST /oauth/token': (req) => {
      const given = req.form?.refresh_token ?? '';
      if (!fake.refreshTokens.has(given)) return { status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token was revoked' } };
      const n = Number(fake.validToken.split('-')[1]) + 1;
      fake.validToken = `token-${n}`;
      if (!fake.rotate) return { body: { access_token: fake.validToken, expires_in: 3600 } };
      // Rotation: a new refresh token replaces the used one.
      fake.refreshTokens.delete(given);
      fake.refreshTokens.add(`refresh-${n}`);
      return { body: { access_token: fake.validToken, refresh_token: `refresh-${n}`, expires_in: 3600 } };
    },
  });
  return fake;
}
