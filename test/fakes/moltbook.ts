/**
 * A local Moltbook API (/api/v1), from the fact sheet: Bearer agent keys with
 * claimed / pending_claim agents; {success:true, post|comment} and
 * {success:false, error, hint?} shapes; one post per 30 minutes per agent (429
 * with retry_after_minutes) and one comment per 20 seconds (429 with
 * retry_after_seconds; the gaps can be shortened, they stay real waits); and, on
 * demand, a verification challenge that must be answered at POST /verify before
 * the post counts (unverified posts are not listed). Its create endpoint is
 * POST /api/v1/posts (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeAgent {
  id: string;
  name: string;
  display_name?: string;
  status: 'claimed' | 'pending_claim';
  karma: number;
  follower_count: number;
}

export interface FakeItem {
  id: string;
  kind: 'post' | 'comment';
  agent: string;
  submolt?: string;
  title?: string;
  content: string;
  postId?: string;
  parentId?: string;
  verified: boolean;
  challenge?: { code: string; answer: string };
  upvotes: number;
  downvotes: number;
}

export interface MoltbookFake extends NetworkFake {
  /** API key → agent. */
  agents: Map<string, FakeAgent>;
  items: FakeItem[];
  /** Shortest time between two posts / two comments of one agent. */
  limits: { postGapMs: number; commentGapMs: number };
  /** The next post or comment answers with this challenge; `answer` is what /verify accepts. */
  challengeNext?: { text: string; answer: string };
  /** Lets the next post go through the 30-minute limit (a test that already waited for it elsewhere). */
  resetLimits(): void;
}

const failure = (status: number, error: string, extra: Record<string, unknown> = {}): FakeAnswer => ({ status, body: { success: false, error, ...extra } });
const SUBMOLTS = new Set(['general', 'agents', 'todayilearned']);

export async function startMoltbookFake(): Promise<MoltbookFake> {
  const agents = new Map<string, FakeAgent>();
  const items: FakeItem[] = [];
  const limits = { postGapMs: 30 * 60_000, commentGapMs: 20_000 };
  const lastPost = new Map<string, number>();
  const lastComment = new Map<string, number>();
  let next = 1;
  const id = () => `7c1e${String(next++).padStart(4, '0')}-4b2a-4d6e-9f10-${String(next).padStart(12, '0')}`;

  const authed =
    (handler: (req: RecordedRequest, agent: FakeAgent) => FakeAnswer) =>
    (req: RecordedRequest): FakeAnswer => {
      const header = req.headers.authorization ?? '';
      const agent = header.startsWith('Bearer ') ? agents.get(header.slice(7)) : undefined;
      if (!agent) return failure(401, 'Invalid API key', { hint: 'Use https://www.moltbook.com (with www): the redirect drops Authorization' });
      return handler(req, agent);
    };

  function challenge(item: FakeItem): Record<string, unknown> {
    const given = fake.challengeNext;
    if (!given) return {};
    fake.challengeNext = undefined;
    const code = `moltbook_verify_${item.id.slice(0, 8)}`;
    item.verified = false;
    item.challenge = { code, answer: given.answer };
    return { verification_required: true, verification_challenge: given.text, verification_code: code };
  }

  const nameOf = (agentId: string) => [...agents.values()].find((a) => a.id === agentId)?.name;
  const view = (i: FakeItem) => ({
    id: i.id,
    title: i.title,
    content: i.content,
    submolt: i.submolt ? { name: i.submolt } : undefined,
    author: { name: nameOf(i.agent) },
    upvotes: i.upvotes,
    downvotes: i.downvotes,
    comment_count: items.filter((c) => c.kind === 'comment' && c.postId === i.id && c.verified).length,
  });

  const fake = (await startNetworkFake({
    'GET /api/v1/agents/me': authed((_req, agent) => ({
      body: {
        success: true,
        agent: { id: agent.id, name: agent.name, display_name: agent.display_name, karma: agent.karma, follower_count: agent.follower_count },
      },
    })),
    'GET /api/v1/agents/status': authed((_req, agent) => ({ body: { success: true, status: agent.status } })),
    'POST /api/v1/posts': authed((req, agent) => {
      if (agent.status !== 'claimed') return failure(403, 'Agent not claimed', { hint: 'Your human must claim you first' });
      const b = req.json ?? {};
      if (!b.submolt || !SUBMOLTS.has(b.submolt)) return failure(404, 'Submolt not found');
      if (typeof b.title !== 'string' || b.title.trim() === '') return failure(400, 'Title is required');
      if (typeof b.content !== 'string' && typeof b.url !== 'string') return failure(400, 'Content or url is required');
      const since = Date.now() - (lastPost.get(agent.id) ?? 0);
      if (since < limits.postGapMs) {
        return failure(429, 'You can only post once every 30 minutes', { retry_after_minutes: Math.ceil((limits.postGapMs - since) / 60_000) });
      }
      lastPost.set(agent.id, Date.now());
      const item: FakeItem = {
        id: id(),
        kind: 'post',
        agent: agent.id,
        submolt: b.submolt,
        title: b.title,
        content: b.content,
        verified: true,
        upvotes: 0,
        downvotes: 0,
      };
      items.push(item);
      const extra = challenge(item);
      return { body: { success: true, post: view(item), ...extra } };
    }),
    'GET /api/v1/posts': authed((req) => {
      const limit = Number(req.query.limit ?? 25);
      const posts = items.filter((i) => i.kind === 'post' && i.verified && (!req.query.submolt || i.submolt === req.query.submolt));
      return { body: { success: true, posts: posts.reverse().slice(0, limit).map(view) } };
    }),
    'GET /api/v1/posts/:id': authed((req) => {
      const post = items.find((i) => i.kind === 'post' && i.id === req.params.id);
      return post ? { body: { success: true, post: view(post) } } : failure(404, 'Post not found');
    }),
    'POST /api/v1/posts/:id/comments': authed((req, agent) => {
      if (agent.status !== 'claimed') return failure(403, 'Agent not claimed');
      const post = items.find((i) => i.kind === 'post' && i.id === req.params.id);
      if (!post) return failure(404, 'Post not found');
      const b = req.json ?? {};
      if (typeof b.content !== 'string' || b.content.trim() === '') return failure(400, 'Content is required');
      if (b.parent_id !== undefined && !items.some((i) => i.kind === 'comment' && i.id === b.parent_id && i.postId === post.id))
        return failure(404, 'Parent comment not found');
      const since = Date.now() - (lastComment.get(agent.id) ?? 0);
      if (since < limits.commentGapMs) {
        return failure(429, 'Slow down! You can comment once every 20 seconds', { retry_after_seconds: Math.ceil((limits.commentGapMs - since) / 1000) });
      }
      lastComment.set(agent.id, Date.now());
      const item: FakeItem = {
        id: id(),
        kind: 'comment',
        agent: agent.id,
        content: b.content,
        postId: post.id,
        parentId: b.parent_id,
        verified: true,
        upvotes: 0,
        downvotes: 0,
      };
      items.push(item);
      const extra = challenge(item);
      return { body: { success: true, comment: { id: item.id, content: item.content, parent_id: item.parentId ?? null }, ...extra } };
    }),
    'GET /api/v1/posts/:id/comments': authed((req) => ({
      body: {
        success: true,
        comments: items
          .filter((i) => i.kind === 'comment' && i.postId === req.params.id && i.verified)
          .reverse()
          .map((c) => ({ id: c.id, content: c.content, parent_id: c.parentId ?? null, author: { name: nameOf(c.agent) } })),
      },
    })),
    'POST /api/v1/verify': authed((req) => {
      const b = req.json ?? {};
      const item = items.find((i) => i.challenge?.code === b.verification_code);
      if (!item) return failure(404, 'Verification code not found or expired');
      if (String(b.answer) !== item.challenge!.answer) return failure(400, 'Incorrect answer', { hint: 'Repeated failures lead to suspension' });
      item.verified = true;
      return { body: { success: true, message: 'Verification successful! Your content is now published.' } };
    }),
  })) as MoltbookFake;

  // Store, then answer a 5xx (`storeThenFail`) on post creation, in the {success: false, error} shape.
  fake.create = { route: 'POST /api/v1/posts', serverError: (status) => failure(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  return Object.assign(fake, {
    agents,
    items,
    limits,
    resetLimits() {
      lastPost.clear();
      lastComment.clear();
    },
  });
}
