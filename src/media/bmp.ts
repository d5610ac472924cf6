/**
 * A small BMP reader, because sharp (libvips) has no BMP loader. It handles the
 * forms that cameras, screenshots and image editors write: uncompressed 24- and
 * 32-bit pixels (also with the usual bit masks) and 1-, 4- and 8-bit palettes.
 * Anything else is reported as unsupported, never guessed at.
 */
import fs from 'node:fs';

export interface BmpHeader {
  width: number;
  height: number;
  /** Rows are stored bottom-up unless the height in the file is negative. */
  bottomUp: boolean;
  bitsPerPixel: number;
  compression: number;
  pixelOffset: number;
  headerSize: number;
  fileSize: number;
}

const BI_RGB = 0;
const BI_BITFIELDS = 3;
/** Larger pictures are refused rather than decoded into hundreds of MB. */
const MAX_PIXELS = 100_000_000;

export class BmpError extends Error {}

export function readBmpHeader(head: Buffer): BmpHeader {
  if (head.length < 54 || head.toString('latin1', 0, 2) !== 'BM') throw new BmpError('not a BMP file');
  const headerSize = head.readUInt32LE(14);
  if (headerSize < 40) throw new BmpError('old OS/2 BMP headers are not supported');
  const rawHeight = head.readInt32LE(22);
  return {
    fileSize: head.readUInt32LE(2),
    pixelOffset: head.readUInt32LE(10),
    headerSize,
    width: head.readInt32LE(18),
    height: Math.abs(rawHeight),
    bottomUp: rawHeight > 0,
    bitsPerPixel: head.readUInt16LE(28),
    compression: head.readUInt32LE(30),
  };
}

/** Decodes a BMP file into RGBA pixels for sharp's raw input. */
export async function decodeBmp(file: string): Promise<{ data: Buffer; width: number; height: number }> {
  const bytes = await fs.promises.readFile(file);
  const h = readBmpHeader(bytes);
  const { width, height, bitsPerPixel: bpp } = h;
  if (width <= 0 || height <= 0 || width * height > MAX_PIXELS) throw new BmpError(`unusable size ${width}x${height}`);
  if (!(h.compression === BI_RGB || (h.compression === BI_BITFIELDS && (bpp === 32 || bpp === 16))))
    throw new BmpError('compressed BMP files are not supported');
  if (![1, 4, 8, 24, 32].includes(bpp)) throw new BmpError(`${bpp}-bit BMP files are not supported`);
  const stride = Math.ceil((width * bpp) / 32) * 4;
  if (h.pixelOffset + stride * height > bytes.length) throw new BmpError('the file is cut short');
  const palette: number[][] = [];
  if (bpp <= 8) {
    const start = 14 + h.headerSize;
    const colours = bytes.readUInt32LE(46) || 1 << bpp;
    for (let i = 0; i < colours && start + i * 4 + 3 < h.pixelOffset; i++) {
      const at = start + i * 4;
      palette.push([bytes[at + 2], bytes[at + 1], bytes[at], 255]);
    }
  }
  const out = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    const row = h.pixelOffset + (h.bottomUp ? height - 1 - y : y) * stride;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      if (bpp >= 24) {
        const at = row + x * (bpp / 8);
        out[o] = bytes[at + 2];
        out[o + 1] = bytes[at + 1];
        out[o + 2] = bytes[at];
        out[o + 3] = 255;
      } else {
        const bit = x * bpp;
        const index = (bytes[row + (bit >> 3)] >> (8 - bpp - (bit & 7))) & ((1 << bpp) - 1);
        const colour = palette[index] ?? [0, 0, 0, 255];
        out.set(colour, o);
      }
    }
  }
  return { data: out, width, height };
}
