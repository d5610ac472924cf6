/**
 * Media as an adapter sees it at publish time: public URL, type, size and a way to
 * read the bytes, already converted where the network needs it (the original stays).
 */
import type { Services } from '../services.ts';
import type { MediaRef, MediaRequirements } from '../providers/types.ts';
import { mediaRef, prepareForNetwork } from './prepare.ts';

export async function publishRefs(services: Services, ids: string[], needs: MediaRequirements | undefined): Promise<Map<string, MediaRef>> {
  const rows = await services.media.byIds(ids);
  const refs = await Promise.all(rows.map((row) => prepareForNetwork(services, mediaRef(services, row), needs)));
  return new Map(refs.map((ref) => [ref.id, ref]));
}
