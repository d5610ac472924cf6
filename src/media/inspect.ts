/**
 * Reads what a user and a network want to know about a file (dimensions,
 * duration) and makes its thumbnail. Images go through sharp, which decodes the
 * whole image, so a damaged or cut-short image is found here. Videos go through
 * ffprobe and ffmpeg when they are installed (Debian's `ffmpeg` package);
 * without them a video simply has no dimensions, duration or poster.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Sharp } from 'sharp';
import { decodeBmp } from './bmp.ts';

/** Longest side of a thumbnail or poster, in pixels. */
export const THUMBNAIL_SIDE = 400;
const TOOL_TIMEOUT_MS = 60_000;

export interface Inspection {
  width: number | null;
  height: number | null;
  duration: number | null;
  /** A JPEG thumbnail written next to the file, or null when none could be made. */
  thumbnail: { file: string; width: number; height: number; size: number } | null;
}

export class DamagedFile extends Error {}

/** sharp (libvips) is loaded on first use: it adds tens of MB to a process that never handles an image. */
export async function loadSharp(): Promise<typeof import('sharp').default> {
  return (await import('sharp')).default;
}

/** A sharp pipeline reading the image; BMP is decoded here first, since libvips has no BMP loader. */
export async function openImage(file: string, mime: string): Promise<Sharp> {
  const sharp = await loadSharp();
  if (mime === 'image/bmp') {
    const { data, width, height } = await decodeBmp(file);
    return sharp(data, { raw: { width, height, channels: 4 } });
  }
  return sharp(file, { failOn: 'truncated', sequentialRead: true });
}

export async function inspectImage(file: string, mime: string, thumbnailFile: string): Promise<Inspection> {
  let image: Sharp;
  let width: number | undefined;
  let height: number | undefined;
  try {
    image = await openImage(file, mime);
    const meta = await image.metadata();
    // Rotated photos (EXIF orientation) are shown turned, so their sides swap.
    const turned = (meta.orientation ?? 1) >= 5;
    width = turned ? meta.height : meta.width;
    height = turned ? meta.width : meta.height;
  } catch (err) {
    throw new DamagedFile(`the image cannot be read (${(err as Error).message})`);
  }
  try {
    // Decoding the whole image (for the thumbnail) is what finds a cut-short file.
    const info = await image
      .rotate()
      .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 80 })
      .toFile(thumbnailFile);
    return {
      width: width ?? null,
      height: height ?? null,
      duration: null,
      thumbnail: { file: thumbnailFile, width: info.width, height: info.height, size: info.size },
    };
  } catch (err) {
    await fs.promises.rm(thumbnailFile, { force: true });
    throw new DamagedFile(`the image is damaged or cut short (${(err as Error).message})`);
  }
}

let tools: Promise<{ ffprobe: boolean; ffmpeg: boolean }> | undefined;

/** Whether ffprobe and ffmpeg can be run here; asked once per process. */
export function videoTools(): Promise<{ ffprobe: boolean; ffmpeg: boolean }> {
  const works = (cmd: string) => new Promise<boolean>((resolve) => execFile(cmd, ['-version'], { timeout: 10_000 }, (err) => resolve(!err)));
  tools ??= Promise.all([works('ffprobe'), works('ffmpeg')]).then(([ffprobe, ffmpeg]) => ({ ffprobe, ffmpeg }));
  return tools;
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

interface Probe {
  streams?: { codec_type?: string; width?: number; height?: number; tags?: { rotate?: string }; side_data_list?: { rotation?: number }[] }[];
  format?: { duration?: string };
}

/** Dimensions, duration and a poster frame; whatever the tools cannot read stays null. */
export async function inspectVideo(file: string, posterFile: string): Promise<Inspection> {
  const found = await videoTools();
  const result: Inspection = { width: null, height: null, duration: null, thumbnail: null };
  if (found.ffprobe) {
    try {
      const probe = JSON.parse(await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file])) as Probe;
      const video = probe.streams?.find((s) => s.codec_type === 'video');
      const rotation = Math.abs(Number(video?.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? video?.tags?.rotate ?? 0)) % 180;
      if (video?.width && video.height) {
        result.width = rotation === 90 ? video.height : video.width;
        result.height = rotation === 90 ? video.width : video.height;
      }
      const duration = Number(probe.format?.duration);
      if (Number.isFinite(duration) && duration > 0) result.duration = Math.round(duration * 1000) / 1000;
    } catch {
      // Not readable by ffprobe (unusual codec, damaged): stored without metadata, as without the tools.
    }
  }
  // A file ffprobe found no picture in gives ffmpeg no poster either.
  if (found.ffmpeg && (!found.ffprobe || result.width !== null)) {
    try {
      const scale = `scale=w='min(${THUMBNAIL_SIDE},iw)':h='min(${THUMBNAIL_SIDE},ih)':force_original_aspect_ratio=decrease`;
      await run('ffmpeg', ['-v', 'error', '-y', '-i', file, '-frames:v', '1', '-vf', scale, '-f', 'image2', '-c:v', 'mjpeg', '-q:v', '4', posterFile]);
      const meta = await (await loadSharp())(posterFile).metadata();
      const { size } = await fs.promises.stat(posterFile);
      result.thumbnail = { file: posterFile, width: meta.width ?? 0, height: meta.height ?? 0, size };
    } catch {
      await fs.promises.rm(posterFile, { force: true });
    }
  }
  return result;
}
