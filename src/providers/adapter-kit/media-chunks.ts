/**
 * Media bytes in fixed-size pieces, for networks that take large files in parts
 * (X's chunked upload, LinkedIn's byte ranges). Only one piece is held at a time.
 */
import type { MediaRef } from '../types.ts';

export async function* mediaChunks(media: MediaRef, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let held = 0;
  for await (const chunk of await media.open()) {
    let rest = Buffer.from(chunk);
    while (held + rest.length >= size) {
      const take = size - held;
      pending.push(rest.subarray(0, take));
      yield Buffer.concat(pending);
      pending = [];
      held = 0;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      pending.push(rest);
      held += rest.length;
    }
  }
  if (held > 0) yield Buffer.concat(pending);
}
