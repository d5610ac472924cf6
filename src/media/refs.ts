/** Media as an adapter sees it at publish time: public URL, type, size and a way to read the bytes. */
import type { Services } from '../app.ts';
import type { MediaRef, MediaRequirements } from '../providers/types.ts';

export async function publishRefs(services: Pick<Services, 'media' | 'storage'>, ids: string[], _needs: MediaRequirements | undefined): Promise<Map<string, MediaRef>> {
  const rows = await services.media.byIds(ids);
  return new Map(
    rows.map((row) => [
      row.id,
      { id: row.id, url: row.url, mimeType: row.mime_type, size: row.size, width: row.width, height: row.height, duration: row.duration, open: () => services.storage.open(row.storage_key) },
    ]),
  );
}
