/**
 * The web composer's draft and the requests saving it sends
 * (web/src/composer/draft.ts and request.ts): pure functions, checked here
 * without a browser. The browser walk (test/web/web-app.test.ts) shows the same
 * requests reaching the server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  blankDraft,
  hasContent,
  inZone,
  isRepeating,
  withChannelToggled,
  withFirstContent,
  withItem,
  withoutCustom,
  withRepeat,
  type Draft,
} from '../../web/src/composer/draft.ts';
import { chosenInstant, composerRequests, type postType, saveRequest, type Target } from '../../web/src/composer/request.ts';
import type { ItemDraft } from '../../web/src/composer-rules.ts';

const NOW = Date.parse('2030-03-04T09:30:00Z');
const image = (id: string, alt = ''): ItemDraft['media'][number] => ({ id, path: `/uploads/${id}.png`, mimeType: 'image/png', thumbnail: null, name: id, alt });
const item = (content: string, extra: Partial<ItemDraft> = {}): ItemDraft => ({ content, media: [], delay: 0, ...extra });
const WEB: Target = { id: 'c-web', identifier: 'webhook' };
const PINS: Target = { id: 'c-pins', identifier: 'pinterest' };

/** A draft for the web receiver and Pinterest, at 10:00 on 6 March 2030 in Berlin (09:00 UTC). */
function draft(change: Partial<Draft> = {}): Draft {
  return {
    ...blankDraft('Europe/Berlin', NOW),
    channels: [WEB.id, PINS.id],
    shared: [item('Harbour lights', { media: [image('m1', 'The harbour')] }), item('Tickets at the door', { delay: 5 })],
    settings: { [PINS.id]: { board: '2222' } },
    local: '2030-03-06T10:00',
    ...change,
  };
}

describe('the composer draft', () => {
  it('starts blank an hour from now in the zone, with repeating off', () => {
    const blank = blankDraft('Europe/Berlin', NOW);
    assert.equal(blank.local, '2030-03-04T11:30');
    assert.deepEqual(blank.shared, [{ content: '', media: [], delay: 0 }]);
    assert.equal(blank.repeat?.on, false);
    assert.equal(hasContent(blank), false);
    assert.equal(hasContent({ ...blank, channels: ['c'] }), true);
    assert.equal(hasContent(withItem(blank, null, 0, { content: 'x' })), true);
  });

  it('adds an item past the end, changes one in place and removes one, in the shared thread or a channel’s own', () => {
    const start = draft();
    const added = withItem(start, null, 2, { content: 'PS' });
    assert.deepEqual(added.shared[2], item('PS'));
    assert.equal(start.shared.length, 2, 'the draft it came from is unchanged');
    assert.equal(withItem(start, null, 0, { content: 'Dawn' }).shared[0]!.content, 'Dawn');
    assert.deepEqual(withItem(start, null, 0, null).shared, [start.shared[1]]);
    // A channel without its own items starts from the shared ones.
    const own = withItem(start, PINS.id, 1, null);
    assert.deepEqual(own.custom[PINS.id], [start.shared[0]]);
    assert.equal(own.shared.length, 2);
    assert.deepEqual(withoutCustom(own, PINS.id).custom, {});
  });

  it('adds a template or a signature to the first item only', () => {
    const signed = withFirstContent(draft(), (content) => `${content}\n\n— the team`);
    assert.equal(signed.shared[0]!.content, 'Harbour lights\n\n— the team');
    assert.equal(signed.shared[1]!.content, 'Tickets at the door');
  });

  it('brings a channel’s default settings when first picked, keeps one channel when editing, and unpicks', () => {
    const start = draft({ channels: [WEB.id], settings: {} });
    const both = withChannelToggled(start, PINS.id, { single: false, defaults: { board: '1' } });
    assert.deepEqual(both.channels, [WEB.id, PINS.id]);
    assert.deepEqual(both.settings, { [PINS.id]: { board: '1' } });
    const edited = withChannelToggled({ ...both, channels: [WEB.id] }, PINS.id, { single: false, defaults: { board: 'other' } });
    assert.deepEqual(edited.settings[PINS.id], { board: '1' }, 'settings already chosen are kept');
    assert.deepEqual(withChannelToggled(start, PINS.id, { single: true, defaults: {} }).channels, [PINS.id]);
    assert.deepEqual(withChannelToggled(both, WEB.id, { single: false, defaults: {} }).channels, [PINS.id]);
  });

  it('keeps the wall-clock time when the zone changes', () => {
    const moved = inZone(draft(), 'America/New_York', NOW);
    assert.equal(moved.zone, 'America/New_York');
    assert.equal(moved.local, '2030-03-06T04:00');
    assert.equal(inZone(draft({ local: 'not a date' }), 'UTC', NOW).local, '2030-03-04T09:30', 'an unreadable date becomes now');
  });

  it('repeats only a new post planned at a date and time', () => {
    const on = withRepeat(draft(), { on: true, weekdays: ['wed'] });
    assert.equal(isRepeating(on, false), true);
    assert.equal(isRepeating(on, true), false, 'a post being edited stays one post');
    assert.equal(isRepeating({ ...on, when: 'now' }, false), false);
    assert.equal(isRepeating({ ...on, repeat: undefined }, false), false, 'drafts saved before repeating posts');
  });
});

describe('the requests the composer sends', () => {
  it('schedules one entry per selected channel, with its items, images and settings', () => {
    const save = saveRequest(draft(), [WEB, PINS]);
    assert.equal(save.to, 'posts');
    assert.deepEqual(save.body, {
      type: 'schedule',
      date: '2030-03-06T09:00:00.000Z',
      shortLink: false,
      posts: [WEB, PINS].map((c) => ({
        integration: { id: c.id },
        value: [
          { content: 'Harbour lights', delay: 0, image: [{ id: 'm1', path: '/uploads/m1.png' }] },
          { content: 'Tickets at the door', delay: 5, image: [] },
        ],
        settings: c === PINS ? { __type: 'pinterest', board: '2222' } : { __type: 'webhook' },
      })),
    });
  });

  it('sends a channel’s own items when it has them, and the group of a post being edited', () => {
    const save = saveRequest(draft({ custom: { [PINS.id]: [item('Pinned')] }, group: 'g-1' }), [WEB, PINS], { editing: 'p-1' });
    assert.equal(save.to, 'posts');
    const [web, pins] = save.to === 'posts' ? save.body.posts : [];
    assert.equal(web!.group, 'g-1');
    assert.equal(web!.value.length, 2);
    assert.deepEqual(pins!.value, [{ content: 'Pinned', delay: 0, image: [] }]);
  });

  it('names the type by what the person chose, and dates only what is planned', () => {
    const cases: [Partial<Draft>, string | undefined, boolean, ReturnType<typeof postType>, string | undefined][] = [
      [{ when: 'at' }, undefined, false, 'schedule', '2030-03-06T09:00:00.000Z'],
      [{ when: 'slot' }, '2030-03-05T12:00:00.000Z', false, 'schedule', '2030-03-05T12:00:00.000Z'],
      [{ when: 'slot' }, undefined, false, 'schedule', undefined],
      [{ when: 'now' }, undefined, false, 'now', undefined],
      // A draft keeps no date, though the form shows one.
      [{ when: 'draft' }, undefined, false, 'draft', undefined],
      [{ when: 'at' }, undefined, true, 'update', '2030-03-06T09:00:00.000Z'],
      [{ when: 'draft' }, undefined, true, 'update', undefined],
      [{ when: 'at', local: '' }, undefined, false, 'schedule', undefined],
    ];
    for (const [change, slot, editing, type, date] of cases) {
      const save = saveRequest(draft(change), [WEB], { editing: editing ? 'p-1' : undefined, slot });
      assert.equal(save.to, 'posts');
      if (save.to !== 'posts') continue;
      const what = JSON.stringify({ change, slot, editing });
      assert.equal(save.body.type, type, what);
      assert.equal('date' in save.body ? save.body.date : undefined, date, what);
      assert.equal(save.thenDraft, editing && change.when === 'draft', what);
    }
    assert.equal(chosenInstant(draft({ when: 'now' }), '2030-03-05T12:00:00.000Z'), undefined, 'a slot found earlier is not used for "now"');
  });

  it('saves a repeating post as a series starting at the chosen date and time, with its rule', () => {
    const repeating = withRepeat(draft({ shortLink: true }), { on: true, name: '  Weekly lights ', weekdays: ['wed', 'fri'], end: 'count', count: 4 });
    const save = saveRequest(repeating, [WEB]);
    assert.equal(save.to, 'series');
    assert.deepEqual(save.body, {
      name: 'Weekly lights',
      repeat: { start: '2030-03-06T09:00:00.000Z', unit: 'week', every: 1, weekdays: ['wed', 'fri'], timezone: 'Europe/Berlin', count: 4 },
      shortLink: true,
      posts: saveRequest({ ...repeating, repeat: undefined }, [WEB]).body!.posts,
    });
    assert.equal((saveRequest(withRepeat(repeating, { name: ' ' }), [WEB]).body as { name?: string }).name, undefined, 'a blank name is left out');
    assert.deepEqual(saveRequest({ ...repeating, local: '' }, [WEB]), { to: 'series', body: undefined }, 'no start, no series');
    assert.equal(saveRequest(repeating, [WEB], { editing: 'p-1' }).to, 'posts', 'a post being edited is not turned into a series');
  });

  it('stores the alt texts written, once per file, before the save', () => {
    const withAlts = draft({ custom: { [PINS.id]: [item('Pinned', { media: [image('m1', 'Harbour at dusk'), image('m2')] })] } });
    assert.deepEqual(composerRequests(withAlts, [WEB, PINS]).altTexts, [['m1', 'Harbour at dusk']]);
    assert.deepEqual(composerRequests(withAlts, [WEB]).altTexts, [['m1', 'The harbour']], 'only the selected channels’ files');
    assert.deepEqual(composerRequests(draft(), []).altTexts, []);
  });
});
