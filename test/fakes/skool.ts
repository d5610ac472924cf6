/**
 * A local stand-in for Skool's private web API (api2.skool.com) as third-party
 * reverse engineering describes it: every call needs the `auth_token` and
 * `client_id` cookies (401 otherwise) and, once `requireWaf` is on, a valid
 * `aws-waf-token` (403 from the firewall when it is missing or expired).
 * GET /self, GET /users/:id/groups, GET /groups/:id (labels as comma-joined
 * ids), GET /labels/:id; POST /files then a presigned-style PUT checking
 * Content-Type, Content-Length and x-amz-acl; POST /posts for `generic`
 * posts (a group may require a category: "cannot post to this label") and
 * `comment`s (root_id / parent_id must name a post of the group / a post or
 * comment under that root), answering {id, name}. Its create endpoint is
 * POST /posts (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const SKOOL_SESSION = {
  authToken: `eyJhbGciOiJIUzI1NiJ9.${Buffer.from('{"user":"skool"}').toString('base64url')}.c2lnbmF0dXJl`,
  clientId: 'b7c1f0e2a9d84f6b',
  wafToken: 'waf-7f3a1c:abc123',
};
export const SKOOL_USER = { id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'herald-writer', first_name: 'Hera', last_name: 'Writer' };

export interface SkoolGroup {
  id: string;
  name: string;
  display_name: string;
  labels: { id: string; name: string }[];
  /** Posts without a category are refused. */
  requiresLabel: boolean;
}

export interface SkoolPost {
  id: string;
  name: string;
  post_type: 'generic' | 'comment';
  group_id: string;
  root_id?: string;
  parent_id?: string;
  title: string;
  content: string;
  attachments: string[];
  labels?: string;
}

export interface SkoolFake extends NetworkFake {
  groups: SkoolGroup[];
  posts: SkoolPost[];
  files: Map<string, { name: string; type: string; length: number; acl: string; data?: Buffer }>;
  /** Calls need a valid aws-waf-token cookie. */
  requireWaf: boolean;
  /** The firewall token expired (about 3.5 days after login). */
  expireWaf(): void;
  /** The person logged out or changed their password: auth_token is dead. */
  endSession(): void;
}

const hex = () => crypto.randomBytes(16).toString('hex');
const slugOf = (title: string) =>
  `${title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}`;

function cookies(req: RecordedRequest): Record<string, string> {
  return Object.fromEntries(
    (req.headers.cookie ?? '')
      .split(';')
      .map((part) => part.trim().split('='))
      .filter((kv) => kv.length >= 2)
      .map(([k, ...v]) => [k, v.join('=')]),
  );
}

export async function startSkoolFake(): Promise<SkoolFake> {
  let sessionAlive = true;
  let wafValid = true;

  const denied = (req: RecordedRequest): FakeAnswer | undefined => {
    const c = cookies(req);
    if (fake.requireWaf && (c['aws-waf-token'] !== SKOOL_SESSION.wafToken || !wafValid)) {
      return { status: 403, headers: { 'content-type': 'text/html' }, body: '<html><body>403 Forbidden: Request blocked.</body></html>' };
    }
    if (c.auth_token !== SKOOL_SESSION.authToken || c.client_id !== SKOOL_SESSION.clientId || !sessionAlive) {
      return { status: 401, body: { message: 'unauthorized' } };
    }
    return undefined;
  };
  const group = (id: string) => fake.groups.find((g) => g.id === id);

  const fake = (await startNetworkFake({
    'GET /self': (req) => denied(req) ?? { body: { ...SKOOL_USER, metadata: { picture_profile: 'https://assets.skool.example/p.jpg', bio: '' } } },
    'GET /users/:id/groups': (req) => {
      const no = denied(req);
      if (no) return no;
      if (req.params.id !== SKOOL_USER.id) return { status: 403, body: { message: 'forbidden' } };
      const offset = Number(req.query.offset ?? 0);
      const limit = Number(req.query.limit ?? 30);
      const page = fake.groups.slice(offset, offset + limit).map((g) => ({ id: g.id, name: g.name, metadata: { display_name: g.display_name } }));
      return { body: { groups: page, total: fake.groups.length } };
    },
    'GET /groups/:id': (req) => {
      const no = denied(req);
      if (no) return no;
      const g = group(req.params.id);
      if (!g) return { status: 404, body: { message: 'group not found' } };
      return { body: { id: g.id, name: g.name, metadata: { display_name: g.display_name, labels: g.labels.map((l) => l.id).join(',') } } };
    },
    'GET /labels/:id': (req) => {
      const no = denied(req);
      if (no) return no;
      const label = fake.groups.flatMap((g) => g.labels).find((l) => l.id === req.params.id);
      if (!label) return { status: 404, body: { message: 'label not found' } };
      return { body: { id: label.id, metadata: { display_name: label.name } } };
    },
    'POST /files': (req, f) => {
      const no = denied(req);
      if (no) return no;
      const b = req.json ?? {};
      if (!b.file_name || !b.content_type || !Number.isInteger(b.content_length) || b.owner_id !== SKOOL_USER.id) {
        return { status: 400, body: { message: 'invalid file request' } };
      }
      const id = hex();
      const acl = 'public-read';
      fake.files.set(id, { name: b.file_name, type: b.content_type, length: b.content_length, acl });
      return {
        body: { file: { id, file_name: b.file_name }, write_url: `${f.url}/s3/uploads/${id}?X-Amz-Signature=sig`, content_type: b.content_type, acl },
      };
    },
    'PUT /s3/uploads/:id': (req) => {
      const file = fake.files.get(req.params.id);
      if (!file || req.query['X-Amz-Signature'] !== 'sig') return { status: 403, body: '<Error><Code>SignatureDoesNotMatch</Code></Error>' };
      if (req.headers['x-amz-acl'] !== file.acl || req.headers['content-type'] !== file.type || req.raw.length !== file.length) {
        return { status: 403, body: '<Error><Code>SignatureDoesNotMatch</Code><Message>headers do not match the signed request</Message></Error>' };
      }
      file.data = req.raw;
      return { status: 200, body: '' };
    },
    'POST /posts': (req) => {
      const no = denied(req);
      if (no) return no;
      const b = req.json ?? {};
      const g = group(b.group_id);
      if (!g) return { status: 404, body: { message: 'group not found' } };
      const m = b.metadata ?? {};
      const attachments = String(m.attachments ?? '')
        .split(',')
        .filter(Boolean);
      if (attachments.some((id) => !fake.files.get(id)?.data)) return { status: 400, body: { message: 'attachment not found' } };
      if (typeof m.content !== 'string') return { status: 400, body: { message: 'content is required' } };
      if (b.post_type === 'generic') {
        if (!m.title) return { status: 400, body: { message: 'title is required' } };
        if (m.labels && !g.labels.some((l) => l.id === m.labels)) return { status: 403, body: { message: 'cannot post to this label' } };
        if (!m.labels && g.requiresLabel) return { status: 403, body: { message: 'cannot post to this label', code: 'MISSING_CATEGORY' } };
        const post: SkoolPost = {
          id: hex(),
          name: `${slugOf(m.title)}-${crypto.randomBytes(3).toString('hex')}`,
          post_type: 'generic',
          group_id: g.id,
          title: m.title,
          content: m.content,
          attachments,
          labels: m.labels,
        };
        fake.posts.push(post);
        return { body: { id: post.id, name: post.name, post_type: 'generic', group_id: g.id, metadata: m } };
      }
      if (b.post_type === 'comment') {
        const root = fake.posts.find((p) => p.id === b.root_id && p.post_type === 'generic' && p.group_id === g.id);
        const parent = fake.posts.find((p) => p.id === b.parent_id && (p.id === b.root_id || p.root_id === b.root_id));
        if (!root || !parent) return { status: 400, body: { message: 'root_id and parent_id must name the post and a comment under it' } };
        const comment: SkoolPost = {
          id: hex(),
          name: hex(),
          post_type: 'comment',
          group_id: g.id,
          root_id: root.id,
          parent_id: parent.id,
          title: '',
          content: m.content,
          attachments,
        };
        fake.posts.push(comment);
        return { body: { id: comment.id, name: comment.name, post_type: 'comment', root_id: root.id, parent_id: parent.id } };
      }
      return { status: 400, body: { message: 'unknown post_type' } };
    },
  })) as SkoolFake;

  fake.groups = [];
  fake.posts = [];
  fake.files = new Map();
  fake.requireWaf = false;
  fake.expireWaf = () => {
    wafValid = false;
  };
  fake.endSession = () => {
    sessionAlive = false;
  };
  // Store, then answer a 5xx (`storeThenFail`) on POST /posts, in the {message} shape of its other errors.
  fake.create = { route: 'POST /posts', serverError: (status) => ({ status, body: { message: STATUS_CODES[status] ?? 'Internal Server Error' } }) };
  return fake;
}
