/**
 * The link card a post's first link gets, read as the Bluesky adapter reads it
 * when publishing (the same Open Graph read, the same image limits), so the
 * composer's preview shows the card that will go out, or that none will.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { linkCard } from '../../providers/adapter-kit/link-card.ts';
import { IMAGE_TYPES, MAX_IMAGE_BYTES } from '../../providers/networks/bluesky.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function linkCardRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    serve(app, routes.linkCard, {
      hide: true,
      handler: async (request) => {
        // A person who leaves the page stops the read; the reader's own deadline bounds the rest.
        const stop = new AbortController();
        request.raw.once('close', () => stop.abort());
        const card = await linkCard(services.outbound, request.query.url, { maxImageBytes: MAX_IMAGE_BYTES, imageTypes: IMAGE_TYPES, signal: stop.signal });
        if (!card) return { card: null };
        const image = card.image ? `data:${card.image.mimeType};base64,${card.image.bytes.toString('base64')}` : null;
        return { card: { uri: card.uri, title: card.title, description: card.description, image } };
      },
    });
  };
}
