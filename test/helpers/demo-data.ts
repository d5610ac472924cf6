/**
 * A Herald with demo data, to look at its pages: the owner signed up (its
 * session in `web`), six channels on several networks, a busy month of posts
 * (published before today, queued or drafts after), one that failed and one
 * with a content warning. Used by scripts/screenshots.ts and the dark-scheme
 * accessibility test.
 */
import { WebClient } from '../accounts/web-client.ts';
import { caller, startHerald, type TestHerald } from './herald.ts';

const DAY = 24 * 60 * 60_000;

export interface DemoHerald {
  herald: TestHerald;
  web: WebClient;
  failedId: string;
  warnedId: string;
}

const CHANNELS: [network: string, name: string, profile: string][] = [
  ['mastodon', 'Harbour Theatre', '@harbour@social.example'],
  ['bluesky', 'Harbour Theatre', 'harbour.bsky.social'],
  ['linkedin', 'Box office', 'harbour-box-office'],
  ['x', 'Riverside Stage', 'riversidestage'],
  ['instagram', 'Summer Festival', 'summer.festival'],
  ['discord', 'Youth Choir', 'Choir#news'],
];
export const DEMO_TEXTS = [
  'Tickets for the spring season are on sale now',
  'Rehearsal photos from last night',
  'Doors open at 19:00, the show starts at 19:30',
  'Meet the cast of our new production',
  'Last chance: two seats left for Saturday',
  'Thank you for a wonderful opening night!',
  'Behind the scenes with the lighting crew',
];

export async function demoHerald(): Promise<DemoHerald> {
  const herald = await startHerald('sqlite', { env: { HERALD_POSTS_PER_HOUR: '100000', HERALD_REQUESTS_PER_MINUTE: '100000' } });
  const web = new WebClient(herald.url);
  const accountId = (await web.signUp('alex@harbour.example')).body.account.id;
  const api = caller(herald.api, (await herald.services.accounts.createKey(accountId, 'demo')).key);
  const channels: string[] = [];
  for (const [network, name, profile] of CHANNELS) {
    channels.push((await herald.services.channels.save(accountId, network, { externalId: `${network}-demo`, name, profile, config: {} })).id);
  }
  // A busy month: a few posts most days, many on some, as drafts first (any date is accepted for a draft).
  const now = new Date();
  const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
  for (let day = 0; day < days; day++) {
    const count = day % 9 === 3 ? 9 : (day * 7) % 4;
    for (let i = 0; i < count; i++) {
      const channel = channels[(day + i) % channels.length]!;
      const at = first + day * DAY + (9 + ((i * 3) % 10)) * 60 * 60_000 + (i % 2) * 30 * 60_000;
      const created = await api('POST', '/posts', {
        type: 'draft',
        date: new Date(at).toISOString(),
        posts: [{ integration: { id: channel }, value: [{ content: DEMO_TEXTS[(day + i) % DEMO_TEXTS.length] }] }],
      });
      if (created.status !== 201) throw new Error(`seeding a post: ${created.status} ${JSON.stringify(created.body)}`);
    }
  }
  const db = herald.services.store.db;
  const mastodon = channels[0]!;
  const warned = await api('POST', '/posts', {
    type: 'draft',
    date: new Date(Date.now() + 2 * DAY).toISOString(),
    posts: [
      {
        integration: { id: mastodon },
        value: [{ content: 'The ending of our winter play, discussed by the director' }],
        settings: { __type: 'mastodon', spoiler_text: 'Spoilers: the winter play' },
      },
    ],
  });
  if (warned.status !== 201) throw new Error(`seeding the warned post: ${JSON.stringify(warned.body)}`);
  // Past posts went out, coming ones wait in the queue, a few stay drafts; one failed.
  const rows = await db.selectFrom('posts').select(['id', 'publish_at']).where('account_id', '=', accountId).orderBy('publish_at').execute();
  for (const [i, row] of rows.entries()) {
    const past = row.publish_at < Date.now();
    const state = past ? 'PUBLISHED' : i % 5 === 0 ? 'DRAFT' : 'QUEUE';
    await db
      .updateTable('posts')
      .set({ state, ...(past ? { release_id: `r${i}`, release_url: `https://social.example/@harbour/${i}` } : {}) })
      .where('id', '=', row.id)
      .execute();
  }
  const failed = rows.filter((r) => r.publish_at < Date.now()).at(-1) ?? rows[0]!;
  await db
    .updateTable('posts')
    .set({ state: 'ERROR', release_id: null, release_url: null, error: 'The network refused the post: the access token has expired' })
    .where('id', '=', failed.id)
    .execute();
  return { herald, web, failedId: failed.id, warnedId: warned.body[0].postId as string };
}
