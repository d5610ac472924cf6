/**
 * Every network this server has, described for a composer: its content rules,
 * how it counts text, and its post settings and credentials as JSON Schema (the
 * same zod objects the server validates with). The web application's composer
 * and the MCP server's list_channels read the same description.
 */
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { JsonSchema } from '../contract/routes/app.ts';
import { allProviders } from './index.ts';
import { networkSettings } from './network-settings.ts';

// zod's own type allows `false` for any subschema (JSON Schema's "nothing"); settings objects never make one.
const jsonSchema = (schema: z.ZodObject) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

export function networkCatalogue(config: Config) {
  return allProviders().map((p) => {
    const { missing, app } = networkSettings(config, p);
    const r = p.rules;
    return {
      identifier: p.identifier,
      name: p.name,
      auth: p.auth,
      configured: missing.length === 0,
      missing,
      rules: {
        maxLength: r.maxLength,
        counting: r.counting ?? 'codePoints',
        maxMedia: r.maxMedia,
        minMedia: r.minMedia ?? 0,
        mediaKinds: r.mediaKinds,
        threads: r.threads,
      },
      settings: jsonSchema(p.settings),
      credentials: p.credentials ? jsonSchema(p.credentials) : null,
      startOptions: p.oauth?.startOptions ? jsonSchema(p.oauth.startOptions) : null,
      approval: !!p.approval && p.approval.settings.every((name) => app[name]),
      note: p.connectNote ?? null,
    };
  });
}

export type NetworkDescription = ReturnType<typeof networkCatalogue>[number];
