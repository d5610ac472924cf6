/**
 * The composer's draft as React state: restored from this browser when one was
 * left there, saved as the person types, and changed through the transitions
 * of draft.ts (the stable ones keep memoised thread items from re-rendering).
 */
import { useCallback, useEffect, useState } from 'react';
import type { Channel, Network } from '../api.ts';
import { cutTo, splitToFit, type Fix, type ItemDraft } from '../composer-rules.ts';
import {
  emptyItem,
  hasContent,
  inZone,
  itemsOf,
  withChannelToggled,
  withFirstContent,
  withItem,
  withItems,
  withoutCustom,
  withRepeat,
  type Draft,
  type Owner,
} from './draft.ts';
import type { RepeatDraft } from './repeat-draft.ts';

export interface ComposerDraftOptions {
  /** The draft the form starts from: blank, a copied or edited post, or a series. */
  start: Draft;
  /** Where a draft left in this browser may be restored from (none when copying a post). */
  restoreFrom?: string;
  /** Where the draft is saved as the person types. */
  storage: string;
  /** Editing a post: it keeps one channel. */
  single: boolean;
  /** The settings a channel brings when first picked. */
  defaultsOf: (channel: string) => Record<string, unknown>;
}

function restore(from: string | undefined): Draft | undefined {
  const saved = from ? localStorage.getItem(from) : null;
  if (!saved) return undefined;
  try {
    const parsed = JSON.parse(saved) as Draft;
    return hasContent(parsed) ? parsed : undefined;
  } catch {
    // An unreadable saved draft is dropped.
    return undefined;
  }
}

export function useComposerDraft({ start, restoreFrom, storage, single, defaultsOf }: ComposerDraftOptions) {
  const [restored, setRestored] = useState(false);
  const [draft, setDraft] = useState<Draft>(() => {
    const saved = restore(restoreFrom);
    if (!saved) return start;
    setTimeout(() => setRestored(true));
    return saved;
  });

  // Saved as the person types; the form removes it once the post is stored.
  useEffect(() => {
    localStorage.setItem(storage, JSON.stringify(draft));
  }, [draft, storage]);

  const toggleChannel = (channel: string) => setDraft((d) => withChannelToggled(d, channel, { single, defaults: defaultsOf(channel) }));
  const setItems = (owner: Owner, items: ItemDraft[]) => setDraft((d) => withItems(d, owner, items));

  return {
    draft,
    /** The draft shown was restored from this browser. */
    restored,
    /** Back to the start, forgetting the restored draft. */
    discard: () => {
      setDraft(start);
      setRestored(false);
    },
    update: (change: Partial<Draft>) => setDraft((d) => ({ ...d, ...change })),
    updateFirst: (change: (content: string) => string) => setDraft((d) => withFirstContent(d, change)),
    changeZone: useCallback((zone: string) => setDraft((d) => inZone(d, zone)), []),
    updateItem: useCallback((owner: Owner, index: number, change: Partial<ItemDraft> | null) => setDraft((d) => withItem(d, owner, index, change)), []),
    toggleChannel,
    /** The channel gets its own copy of the shared items, to adjust. */
    adjust: (channel: string) => setItems(channel, structuredClone(draft.shared)),
    backToShared: (channel: string) => setDraft((d) => withoutCustom(d, channel)),
    setSettings: (channel: string, value: Record<string, unknown>) => setDraft((d) => ({ ...d, settings: { ...d.settings, [channel]: value } })),
    changeRepeat: (change: Partial<RepeatDraft>) => setDraft((d) => withRepeat(d, change)),
    /** One of the fixes a network's rules offer for an item: split it, shorten it, or drop the channel. */
    applyFix: (channel: Channel, network: Network, item: number, fix: Fix) => {
      if (fix === 'drop') return toggleChannel(channel.id);
      const items = itemsOf(draft, channel.id);
      const text = items[item]!.content;
      const replacement =
        fix === 'split'
          ? splitToFit(network, text).map((content, i) => (i === 0 ? { ...items[item]!, content } : { ...emptyItem(), content }))
          : [{ ...items[item]!, content: cutTo(network, text, network.rules.maxLength) }];
      setItems(channel.id, [...items.slice(0, item), ...replacement, ...items.slice(item + 1)]);
    },
  };
}

export type ComposerDraft = ReturnType<typeof useComposerDraft>;
