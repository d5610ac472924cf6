/**
 * What every preview starts from and the pieces most of them show: media in
 * frames of a given shape (cropped when the picture's own shape differs) and
 * flags for what the network will crop or cut. Pure: the unit tests call it.
 */
import type { MessageKey } from '../i18n.ts';
import type { TextCounting } from '../../../src/providers/text-counting.ts';

export interface PreviewMedia {
  id: string;
  path: string;
  mimeType: string;
  thumbnail: string | null;
  name: string;
  alt: string;
}

export interface PreviewItem {
  content: string;
  media: PreviewMedia[];
}

/** A picture's size in pixels, known once the browser has read it. */
export interface Size {
  width: number;
  height: number;
}

export interface PreviewInput {
  network: { identifier: string; name: string; rules: { maxLength: number; counting: TextCounting; maxMedia: number; threads: boolean } };
  channel: { name: string; profile: string | null };
  items: PreviewItem[];
  /** The post's settings for this network (title, board, subreddit…). */
  settings: Record<string, unknown>;
  /** Sizes of the media by path, as far as they are known. */
  sizes: Record<string, Size>;
}

/** Something the network will do to the post that the person should know before it goes out. */
export interface Flag {
  key: MessageKey;
  vars?: Record<string, string | number>;
}

/** A medium as the network frames it: the frame's width / height, and whether the picture is cut to fit it. */
export interface Cell {
  media: PreviewMedia;
  /** Width / height of the frame; undefined while the picture's own size is unknown. */
  ratio?: number;
  cropped: boolean;
}

/** The narrowest and widest shapes a network shows as they are (width / height). */
export interface Bounds {
  min: number;
  max: number;
}

export const isVideo = (m: PreviewMedia) => m.mimeType.startsWith('video/');

/** Shapes within 2 % of each other look the same: no crop is flagged for rounding. */
const TOLERANCE = 0.02;

/** A picture in a frame whose shape may vary within `bounds` (one fixed shape: min = max). */
export function frame(media: PreviewMedia, size: Size | undefined, bounds: Bounds): Cell {
  if (!size || size.width <= 0 || size.height <= 0) return { media, ratio: bounds.min === bounds.max ? bounds.min : undefined, cropped: false };
  const own = size.width / size.height;
  const ratio = Math.min(bounds.max, Math.max(bounds.min, own));
  return { media, ratio, cropped: Math.abs(own - ratio) / ratio > TOLERANCE };
}

/** One fixed shape, as grids of several pictures use. */
export const fixed = (ratio: number): Bounds => ({ min: ratio, max: ratio });

/** The flags of cropped cells (one per picture), named by file. */
export function cropFlags(cells: Cell[], network: string): Flag[] {
  return cells.filter((c) => c.cropped).map((c) => ({ key: 'previews.cropped', vars: { name: c.media.name, network } }));
}

/** Flags for text past the fold and past the limit. */
export function textFlags(parts: { folded: string; cut: string }, network: string, maxLength: number): Flag[] {
  const flags: Flag[] = [];
  if (parts.folded) flags.push({ key: 'previews.folded', vars: { network } });
  if (parts.cut) flags.push({ key: 'previews.cut', vars: { network, max: maxLength } });
  return flags;
}

/** Media the network does not take past its maximum. */
export function droppedFlag(count: number, max: number, network: string): Flag[] {
  return count > max ? [{ key: 'previews.dropped', vars: { network, max, count: count - max } }] : [];
}

/** A setting as text, when it is one. */
export function textSetting(settings: Record<string, unknown>, name: string): string {
  const value = settings[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** An uploaded file named in settings ({path}), such as a cover or a thumbnail. */
export function pathSetting(settings: Record<string, unknown>, name: string): string | undefined {
  const value = settings[name] as { path?: unknown } | undefined;
  return value && typeof value.path === 'string' && value.path ? value.path : undefined;
}
