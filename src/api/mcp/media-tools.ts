/** Media: a file is fetched from a URL into the account's library before a post can carry it. */
import { uploadFromUrlBody } from '../../contract/index.ts';
import { mediaView } from '../../domain/media.ts';
import { storeFromUrl } from '../../domain/media-from-url.ts';
import { idempotencyKeyArgument, underIdempotencyKey } from './idempotency.ts';
import { defineTool } from './tool.ts';

export const uploadMediaFromUrl = defineTool({
  name: 'upload_media_from_url',
  title: 'Upload media from a URL',
  description: [
    "Fetches an image or video from a public http(s) URL into this account's media library, so a post can carry it.",
    'Posts only take media stored in Herald: upload each file first, then put {"id": <id>, "path": <path>} of the answer into',
    "create_post's posts[].value[].image. The type is read from the bytes: JPEG, PNG, GIF, WebP, AVIF, BMP, TIFF, MP4, MOV, WebM;",
    'private and local addresses are refused.',
  ].join(' '),
  scope: 'media:write',
  input: uploadFromUrlBody
    .extend({
      url: uploadFromUrlBody.shape.url.describe('A public http(s) URL of the file'),
      idempotency_key: idempotencyKeyArgument,
    })
    .strict(),
  hints: { readOnly: false, openWorld: true },
  async run({ idempotency_key, ...args }, { services, principal }) {
    return underIdempotencyKey(services, principal.accountId, idempotency_key, 'MCP upload_media_from_url', args, async () =>
      mediaView(await storeFromUrl(services, principal.accountId, args.url)),
    );
  },
});
