/**
 * A local Instagram API with Instagram Login: the authorize screen, the code
 * exchange on api.instagram.com (whose user_id is a JSON number too large for a
 * double), the long-lived exchange and refresh on graph.instagram.com, /me, and
 * the same content and insights endpoints as the Facebook Login flavour
 * (insights need instagram_business_manage_insights).
 */
import { consentAllows, startNetworkFake } from './network-fake.ts';
import { instagramContentRoutes, type InstagramFake } from './instagram.ts';
import { authed, graphError, tokenBook } from './meta.ts';

export const IGS_APP = { id: 'igs-app-id', secret: 'igs-app-secret' };
export const IGS_USER = { user_id: '17841400000000031', username: 'herald.solo', name: 'Herald Solo' };
/** Instagram appends "#_" to the code it hands back. */
export const IGS_CODE = 'igs-code-1';

export interface InstagramStandaloneFake extends InstagramFake {
  /** Lifetime of the long-lived tokens it issues, in seconds. */
  lifetime: number;
}

export async function startInstagramStandaloneFake(): Promise<InstagramStandaloneFake> {
  const fake = (await startNetworkFake()) as InstagramStandaloneFake;
  fake.media = [];
  fake.comments = [];
  fake.followers = new Map();
  fake.lifetime = 5_184_000;
  const book = tokenBook(fake);
  let issued = 0;
  const longLived = () => {
    const token = `igs-long-${++issued}`;
    book.valid.set(token, IGS_USER.user_id);
    return { body: { access_token: token, token_type: 'bearer', expires_in: fake.lifetime } };
  };

  fake.route({
    'GET /oauth/authorize': consentAllows(`${IGS_CODE}#_`),
    'POST /oauth/access_token': (request) => {
      const f = request.form ?? {};
      if (f.client_id !== IGS_APP.id || f.client_secret !== IGS_APP.secret)
        return { status: 400, body: { error_type: 'OAuthException', code: 400, error_message: 'Invalid platform app' } };
      if (f.grant_type !== 'authorization_code' || f.code !== IGS_CODE || f.redirect_uri !== fake.state.authorize?.redirect_uri) {
        return {
          status: 400,
          body: {
            error_type: 'OAuthException',
            code: 400,
            error_message:
              'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
          },
        };
      }
      book.valid.set('igs-short', IGS_USER.user_id);
      // As Instagram sends it: user_id as a bare number.
      return {
        headers: { 'content-type': 'application/json' },
        body: `{"access_token":"igs-short","user_id":${IGS_USER.user_id},"permissions":["instagram_business_basic","instagram_business_content_publish"]}`,
      };
    },
    'GET /access_token': (request) => {
      const q = request.query;
      if (q.grant_type !== 'ig_exchange_token' || q.client_secret !== IGS_APP.secret || q.access_token !== 'igs-short')
        return graphError(190, 'Invalid OAuth access token - Cannot parse access token');
      return longLived();
    },
    'GET /refresh_access_token': (request) => {
      const token = request.query.access_token;
      if (request.query.grant_type !== 'ig_refresh_token' || !book.valid.has(token) || book.revoked.has(token))
        return graphError(190, 'Error validating access token: Session has expired.', { subcode: 463 });
      return longLived();
    },
    'GET /:version/me': authed(fake, (request) => ({
      body: { id: 'app-scoped-77', ...IGS_USER, profile_picture_url: 'https://pics.example/solo.jpg', account_type: 'BUSINESS', fields: request.query.fields },
    })),
    ...instagramContentRoutes(fake, 'instagram_business_manage_insights'),
  });
  return fake;
}
