/**
 * A local listmonk (v4+) API, from the fact sheet: API users authenticate with
 * `Authorization: token user:token` or Basic base64(user:token) and get 403
 * {"message":"invalid API credentials"} otherwise; a `session` cookie makes the
 * Authorization header count for nothing; each route needs its permission
 * (403 "permission denied: <perm>"); campaigns are validated as listmonk does and
 * created as drafts; the status route follows listmonk's transition rules with
 * its exact messages. Its create endpoint is POST /api/campaigns (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeList {
  id: number;
  name: string;
  type: 'public' | 'private';
  subscriber_count: number;
}

export interface FakeCampaign {
  id: number;
  uuid: string;
  name: string;
  subject: string;
  lists: number[];
  type: string;
  content_type: string;
  body: string;
  /** The body as a subscriber reads it: listmonk runs it as a Go template. */
  rendered: string;
  template_id: number;
  tags: string[];
  status: string;
  created_at: string;
  sent: number;
  to_send: number;
  views: number;
  clicks: number;
  bounces: number;
}

export interface ListmonkFake extends NetworkFake {
  user: { id: number; username: string; token: string };
  /** The API user's permissions; tests take some away. */
  permissions: Set<string>;
  lists: FakeList[];
  campaigns: FakeCampaign[];
  /** Regenerates the API user's token, as an admin can: the old one stops working. */
  regenerateToken(): void;
}

const ALL_PERMISSIONS = ['lists:get_all', 'templates:get', 'campaigns:get', 'campaigns:manage', 'campaigns:send'];
const CONTENT_TYPES = new Set(['richtext', 'html', 'markdown', 'plain', 'visual']);

/** Functions listmonk gives campaign templates (docs/content/templating.md). */
const TEMPLATE_FUNCTIONS = /^(UnsubscribeURL|ManageURL|OptinURL|MessageURL|TrackView|TrackLink|Date|L|Safe)\b/;

/**
 * A campaign body run as a Go template, as listmonk does when it compiles a
 * campaign: a string literal action prints the string, `.Subscriber…` and
 * `.Campaign…` fields and listmonk's functions print their values (sample ones
 * here), and anything else fails compiling, as text/template says.
 */
function renderTemplate(body: string): { rendered: string } | { error: string } {
  let rendered = '';
  let rest = body;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open === -1) return { rendered: rendered + rest };
    const close = rest.indexOf('}}', open + 2);
    if (close === -1) return { error: 'Error compiling template: template: content:1: unclosed action' };
    rendered += rest.slice(0, open);
    const action = rest
      .slice(open + 2, close)
      .replace(/^-\s|\s-$/g, '')
      .trim();
    if (/^"(?:[^"\\]|\\.)*"$/.test(action)) rendered += JSON.parse(action);
    else if (/^\.(Subscriber|Campaign)\b/.test(action)) rendered += `[${action}]`;
    else if (TEMPLATE_FUNCTIONS.test(action)) rendered += `[${action.split(/\s/)[0]}]`;
    else return { error: `Error compiling template: template: content:1: function "${action.split(/\s/)[0]}" not defined` };
    rest = rest.slice(close + 2);
  }
}
const TEMPLATES = [
  { id: 1, name: 'Default campaign template', type: 'campaign', is_default: true },
  { id: 2, name: 'Plain', type: 'campaign', is_default: false },
  { id: 3, name: 'Default transactional template', type: 'tx', is_default: false },
];

const message = (status: number, text: string): FakeAnswer => ({ status, body: { message: text } });
const data = (value: unknown): FakeAnswer => ({ body: { data: value } });

export async function startListmonkFake(): Promise<ListmonkFake> {
  const user = { id: 4, username: 'herald-api', token: 'lm-token-7d1c93a0b5e24f68' };
  const permissions = new Set(ALL_PERMISSIONS);
  const lists: FakeList[] = [
    { id: 3, name: 'Newsletter', type: 'public', subscriber_count: 120 },
    { id: 5, name: 'Empty list', type: 'private', subscriber_count: 0 },
  ];
  const campaigns: FakeCampaign[] = [];
  let nextId = 10;

  /** Who the request authenticates as, or the 403 listmonk gives. */
  function authenticate(req: RecordedRequest): FakeAnswer | undefined {
    // With a session cookie listmonk checks the session and ignores Authorization; the fake knows no sessions.
    if (/(^|;\s*)session=/.test(req.headers.cookie ?? '')) return message(403, 'invalid session');
    const header = req.headers.authorization ?? '';
    let pair: string;
    if (header.startsWith('token ')) pair = header.slice(6);
    else if (header.startsWith('Basic ')) {
      const encoded = header.slice(6);
      if (!/^[A-Za-z0-9+/]+=*$/.test(encoded)) return message(403, 'invalid Base64 value in Basic Authorization header');
      pair = Buffer.from(encoded, 'base64').toString('utf8');
    } else return message(403, 'unknown Authorization scheme');
    const colon = pair.indexOf(':');
    if (colon < 1 || colon === pair.length - 1) return message(403, 'api_key:token missing');
    if (pair.slice(0, colon) !== user.username || pair.slice(colon + 1) !== user.token) return message(403, 'invalid API credentials');
    return undefined;
  }

  /** A route needing `permission` (or none). */
  const guarded =
    (permission: string | undefined, handler: (req: RecordedRequest) => FakeAnswer) =>
    (req: RecordedRequest): FakeAnswer => {
      const refused = authenticate(req);
      if (refused) return refused;
      if (permission && !permissions.has(permission)) return message(403, `permission denied: ${permission}`);
      return handler(req);
    };

  const view = ({ rendered: _rendered, ...c }: FakeCampaign) => ({ ...c, lists: c.lists.map((id) => ({ id, name: lists.find((l) => l.id === id)?.name })) });
  const find = (id: string) => campaigns.find((c) => String(c.id) === id);

  const fake = (await startNetworkFake({
    'GET /api/health': () => data(true),
    'GET /api/profile': guarded(undefined, () => data({ id: user.id, username: user.username, name: 'Herald API', type: 'api', status: 'enabled', email: '' })),
    'GET /api/lists': guarded('lists:get_all', () => data({ results: lists, total: lists.length, per_page: lists.length, page: 1 })),
    'GET /api/templates': guarded('templates:get', () => data(TEMPLATES)),
    'GET /api/campaigns': guarded('campaigns:get', (req) => {
      const q = (req.query.query ?? '').toLowerCase();
      const found = campaigns.filter((c) => !q || c.name.toLowerCase().includes(q) || c.subject.toLowerCase().includes(q));
      const ordered = req.query.order === 'desc' ? [...found].reverse() : found;
      return data({ results: ordered.map(view), total: ordered.length, per_page: Number(req.query.per_page ?? 20), page: 1 });
    }),
    'GET /api/campaigns/:id': guarded('campaigns:get', (req) => {
      const c = find(req.params.id);
      return c ? data(view(c)) : message(404, 'Campaign not found.');
    }),
    'POST /api/campaigns': guarded('campaigns:manage', (req) => {
      const b = req.json ?? {};
      if (typeof b.name !== 'string' || b.name.length < 1 || b.name.length > 2000) return message(400, 'Invalid length for name.');
      if (typeof b.subject !== 'string' || b.subject.length < 1 || b.subject.length > 5000) return message(400, 'Invalid length for subject.');
      if (!Array.isArray(b.lists) || b.lists.length === 0 || b.lists.some((id: unknown) => !Number.isInteger(id) || !lists.some((l) => l.id === id)))
        return message(400, 'Invalid list IDs.');
      if (b.type !== 'regular' && b.type !== 'optin') return message(400, 'Invalid campaign type.');
      if (!CONTENT_TYPES.has(b.content_type)) return message(400, 'Invalid content type.');
      if (typeof b.body !== 'string') return message(400, 'Invalid body.');
      const compiled = renderTemplate(b.body);
      if ('error' in compiled) return message(400, compiled.error);
      const templateId = b.template_id ?? 1;
      if (!TEMPLATES.some((t) => t.id === templateId && t.type === 'campaign')) return message(400, 'Template not found.');
      const toSend = lists.filter((l) => b.lists.includes(l.id)).reduce((sum, l) => sum + l.subscriber_count, 0);
      if (toSend === 0) return message(400, 'There are no subscribers in the selected lists to create the campaign.');
      const campaign: FakeCampaign = {
        id: nextId++,
        uuid: `5f0c${String(nextId).padStart(4, '0')}-7a2b-4c1d-9e3f-0a1b2c3d4e5f`,
        name: b.name,
        subject: b.subject,
        lists: b.lists,
        type: b.type,
        content_type: b.content_type,
        body: b.body,
        rendered: compiled.rendered,
        template_id: templateId,
        tags: b.tags ?? [],
        status: 'draft',
        created_at: new Date().toISOString(),
        sent: 0,
        to_send: toSend,
        views: 0,
        clicks: 0,
        bounces: 0,
      };
      campaigns.push(campaign);
      return data(view(campaign));
    }),
    'PUT /api/campaigns/:id/status': guarded('campaigns:send', (req) => {
      const c = find(req.params.id);
      if (!c) return message(404, 'Campaign not found.');
      const to = req.json?.status;
      if (to === 'running') {
        if (c.status !== 'draft' && c.status !== 'paused') return message(400, 'Only paused campaigns and drafts can be started.');
      } else if (to === 'scheduled') {
        if (c.status !== 'draft' && c.status !== 'paused') return message(400, 'Only paused campaigns and drafts can be scheduled.');
      } else if (to === 'paused' || to === 'cancelled') {
        if (c.status !== 'running') return message(400, 'Only running campaigns can be paused or cancelled.');
      } else if (to === 'draft') {
        if (c.status !== 'scheduled') return message(400, 'Only scheduled campaigns can be unscheduled.');
      } else return message(400, 'Invalid status.');
      c.status = to;
      return data(view(c));
    }),
  })) as ListmonkFake;

  // Store, then answer a 5xx (`storeThenFail`) on campaign creation: listmonk's own {message} for a 500, its proxy's text otherwise.
  fake.create = {
    route: 'POST /api/campaigns',
    serverError: (status) =>
      status === 500
        ? message(500, 'Error creating campaign')
        : { status, body: STATUS_CODES[status] ?? 'Server Error', headers: { 'content-type': 'text/plain' } },
  };
  return Object.assign(fake, {
    user,
    permissions,
    lists,
    campaigns,
    regenerateToken() {
      user.token = `lm-token-${Math.random().toString(16).slice(2)}`;
    },
  });
}
