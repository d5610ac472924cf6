import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.ts';
import { allProviders } from '../../providers/index.ts';
import { networkSettings } from '../../providers/network-settings.ts';
import { PublishError } from '../../providers/errors.ts';
import { iso } from '../../lib/time.ts';
import type { Services } from '../../services.ts';
import { sendJsonText } from '../json-text.ts';
import { requireScope } from '../auth.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['integrations'];

function rulesText(p: ReturnType<typeof allProviders>[number]): string {
  const r = p.rules;
  return (
    `At most ${r.maxLength} characters; up to ${r.maxMedia} media (${r.mediaKinds.join(', ')}); ` +
    `${r.threads ? 'later items are published as replies' : 'no threads: only the first item is published'}.`
  );
}

export function integrationsRoutes(services: Services): FastifyPluginAsyncZod {
  const { channels } = services;
  return async (app) => {
    serve(app, routes.integrations, {
      tags,
      summary: 'List connected channels',
      handler: async (request, reply) => sendJsonText(reply, await channels.listJson(request.principal.accountId, request.query.group)),
    });

    serve(app, routes.createIntegration, {
      tags,
      summary: 'Add a channel that connects with credentials (e.g. a webhook URL)',
      description:
        'Channels of OAuth networks are connected through GET /social/{provider}. The answer includes secrets (e.g. the webhook signing secret) once.',
      handler: async (request, reply) => {
        const { channel, revealOnce } = await channels.addWithCredentials(request.principal.accountId, request.body);
        return reply.code(201).send({ ...channel, ...(revealOnce ? { secrets: revealOnce } : {}) });
      },
    });

    serve(app, routes.updateIntegration, {
      tags,
      summary: "Change a channel's name, time zone, posting times, customer or disabled flag",
      handler: async (request) => channels.update(request.principal.accountId, request.params.id, request.body),
    });

    serve(app, routes.deleteIntegration, {
      tags,
      summary: 'Remove a channel and its pending posts',
      handler: async (request) => {
        await channels.remove(request.principal.accountId, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    serve(app, routes.findSlot, {
      tags,
      summary: "The channel's next free posting time",
      handler: async (request) => ({ date: iso(await channels.findSlot(request.principal.accountId, request.params.id)) }),
    });

    serve(app, routes.integrationSettings, {
      tags,
      summary: "The channel's content rules, settings schema (JSON schema) and helper tools",
      handler: async (request) => {
        const provider = channels.provider(await channels.row(request.principal.accountId, request.params.id));
        return {
          output: {
            rules: rulesText(provider),
            maxLength: provider.rules.maxLength,
            settings: z.toJSONSchema(provider.settings),
            tools: Object.entries(provider.tools ?? {}).map(([methodName, tool]) => ({ methodName, description: tool.description })),
          },
        };
      },
    });

    serve(app, routes.runTool, {
      tags,
      summary: 'Run a helper tool of the channel (list boards, channels...)',
      handler: async (request) => {
        const row = await channels.row(request.principal.accountId, request.params.id);
        const provider = channels.provider(row);
        const tool = Object.hasOwn(provider.tools ?? {}, request.body.methodName) ? provider.tools![request.body.methodName] : undefined;
        if (!tool)
          throw new ApiError('unknown_method', `methodName: ${provider.name} has no tool "${request.body.methodName}"`, [
            { path: 'methodName', message: 'unknown tool' },
          ]);
        if (tool.acts) requireScope(request.principal, 'channels:write', `run the tool "${request.body.methodName}"`);
        try {
          return { output: await tool.run({ ...services.network(provider), channel: channels.publishView(row), data: request.body.data ?? {} }) };
        } catch (err) {
          // The network's answer is the user's to read, not a 500.
          if (!(err instanceof PublishError)) throw err;
          if (err.kind === 'auth' || err.kind === 'refused')
            throw new ApiError('tool_refused', `${provider.name} refused: ${err.message}`, [{ path: 'methodName', message: err.message }]);
          throw new ApiError('network_unavailable', `${provider.name} could not be reached: ${err.message}`);
        }
      },
    });

    serve(app, routes.connect, {
      tags,
      summary: "Start connecting a channel through the network's OAuth",
      description:
        'Send the user to `url`. The network sends them back to Herald, which stores the channel (and asks which account when there are several). ' +
        'Extra query parameters go to the network (e.g. `instance` for Mastodon).',
      handler: async (request) => {
        const { refresh: _refresh, ...options } = request.query;
        return services.connections.start(request.principal.accountId, request.params.provider, options);
      },
    });

    serve(app, routes.networks, {
      tags,
      summary: 'The networks this server can publish to, and whether each is configured',
      handler: async () =>
        allProviders().map((p) => {
          const { missing } = networkSettings(services.config, p);
          return { identifier: p.identifier, name: p.name, auth: p.auth, configured: missing.length === 0, missing, rules: rulesText(p) };
        }),
    });

    serve(app, routes.channelAnalytics, {
      tags: ['analytics'],
      summary: 'Channel analytics for the last `date` days',
      handler: async (request) => services.reads.channelAnalytics(request.principal.accountId, request.params.id, request.query.date),
    });

    serve(app, routes.postAnalytics, {
      tags: ['analytics'],
      summary: 'Analytics of one published post',
      handler: async (request) => services.reads.postAnalytics(request.principal.accountId, request.params.id, request.query.date),
    });
  };
}
