/**
 * Reading an answer from a server Herald does not control (a network, a webhook
 * receiver, a feed, a web page) up to a size: whatever the server sends, Herald
 * keeps at most `limit` bytes in memory and parses no more. Leaving the loop
 * early ends the stream, so the rest is never downloaded.
 */
export async function readAtMost(body: AsyncIterable<Uint8Array> | null | undefined, limit: number): Promise<{ bytes: Buffer; whole: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    if (size + chunk.length > limit) {
      chunks.push(Buffer.from(chunk.subarray(0, limit - size)));
      return { bytes: Buffer.concat(chunks), whole: false };
    }
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), whole: true };
}
