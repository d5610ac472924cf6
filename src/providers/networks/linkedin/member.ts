/** LinkedIn member profile (`linkedin`): OAuth 2, posts as urn:li:person:{sub}. */
import type { Provider } from '../../types.ts';
import { exchangeCode, linkedinChannel, startAuthorization, userInfo, type LinkedInConfig } from './api.ts';

export const linkedin: Provider<LinkedInConfig> = {
  identifier: 'linkedin',
  name: 'LinkedIn',
  ...linkedinChannel,

  oauth: {
    async start(ctx) {
      return { url: startAuthorization(ctx, ['openid', 'profile', 'w_member_social']) };
    },
    async finish(ctx) {
      const tokens = await exchangeCode(ctx);
      const me = await userInfo(ctx, tokens.accessToken!);
      const config: LinkedInConfig = { ...tokens, author: `urn:li:person:${me.sub}` };
      return [{ externalId: me.sub, name: me.name ?? me.sub, picture: me.picture ?? null, profile: null, config: { ...config } }];
    },
  },
};
