/**
 * The composer's draft (what the person has chosen and written so far) and the
 * changes the form makes to it, each a function from one draft to the next.
 * Pure (no React, no DOM), so useComposerDraft only wires them to state and the
 * unit tests call them directly.
 */
import type { ItemDraft } from '../composer-rules.ts';
import { fromLocalInput, toLocalInput } from '../wall-clock.ts';
import { noRepeat, type RepeatDraft } from './repeat-draft.ts';

export type When = 'at' | 'slot' | 'now' | 'draft';

export interface Draft {
  channels: string[];
  shared: ItemDraft[];
  /** Channels whose text was adjusted: their own items. */
  custom: Record<string, ItemDraft[]>;
  settings: Record<string, Record<string, unknown>>;
  when: When;
  local: string;
  zone: string;
  shortLink: boolean;
  /** Editing: the post's group. */
  group?: string;
  /** Repeating (POST /series instead of /posts); absent in drafts saved before repeating posts. */
  repeat?: RepeatDraft;
}

/** Whose thread an item belongs to: the shared one (null) or a channel's own. */
export type Owner = string | null;

const HOUR = 3_600_000;

export const emptyItem = (): ItemDraft => ({ content: '', media: [], delay: 0 });

/** A new post: planned an hour from `now`, in `zone`. */
export function blankDraft(zone: string, now = Date.now()): Draft {
  return {
    channels: [],
    shared: [emptyItem()],
    custom: {},
    settings: {},
    when: 'at',
    local: toLocalInput(now + HOUR, zone),
    zone,
    shortLink: false,
    repeat: noRepeat(),
  };
}

/** The key a draft is kept under in the browser: a new post, a post (by id) or a series (`series-{id}`). */
/** A saved draft is worth offering back when something was chosen or written. */
export const hasContent = (draft: Draft) => draft.shared.some((i) => i.content || i.media.length) || draft.channels.length > 0;

/** The items a channel publishes: its own when adjusted, else the shared ones. */
export const itemsOf = (draft: Draft, channel: string) => draft.custom[channel] ?? draft.shared;

export const repeatOf = (draft: Draft) => draft.repeat ?? noRepeat();

/** A repeating post is planned at a date and time; a single post being edited stays one. */
export const isRepeating = (draft: Draft, editing: boolean) => !editing && draft.when === 'at' && repeatOf(draft).on;

/** One item changed: an index past the end adds one, a null change removes it. */
export function withItem(draft: Draft, owner: Owner, index: number, change: Partial<ItemDraft> | null): Draft {
  const items = owner === null ? draft.shared : itemsOf(draft, owner);
  let next: ItemDraft[];
  if (change === null) next = items.filter((_, j) => j !== index);
  else if (index >= items.length) next = [...items, { ...emptyItem(), ...change }];
  else next = items.map((item, j) => (j === index ? { ...item, ...change } : item));
  return withItems(draft, owner, next);
}

export function withItems(draft: Draft, owner: Owner, items: ItemDraft[]): Draft {
  return owner === null ? { ...draft, shared: items } : { ...draft, custom: { ...draft.custom, [owner]: items } };
}

/** The channel publishes the shared items again. */
export function withoutCustom(draft: Draft, channel: string): Draft {
  const { [channel]: _, ...rest } = draft.custom;
  return { ...draft, custom: rest };
}

/** The first shared item's text changed (a template or a signature added). */
export function withFirstContent(draft: Draft, change: (content: string) => string): Draft {
  return { ...draft, shared: draft.shared.map((item, i) => (i === 0 ? { ...item, content: change(item.content) } : item)) };
}

/**
 * A channel picked or unpicked. A post being edited has one channel, so
 * picking another replaces it; a channel picked for the first time brings its
 * default settings.
 */
export function withChannelToggled(draft: Draft, channel: string, { single, defaults }: { single: boolean; defaults: Record<string, unknown> }): Draft {
  let channels: string[];
  if (draft.channels.includes(channel)) channels = draft.channels.filter((x) => x !== channel);
  else channels = single ? [channel] : [...draft.channels, channel];
  return { ...draft, channels, settings: draft.settings[channel] ? draft.settings : { ...draft.settings, [channel]: { ...defaults } } };
}

/** The same wall-clock time in the newly chosen zone (now, when the date is not one). */
export function inZone(draft: Draft, zone: string, now = Date.now()): Draft {
  return { ...draft, zone, local: toLocalInput(fromLocalInput(draft.local, draft.zone) ?? now, zone) };
}

export function withRepeat(draft: Draft, change: Partial<RepeatDraft>): Draft {
  return { ...draft, repeat: { ...repeatOf(draft), ...change } };
}
