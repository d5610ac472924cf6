/**
 * What each person chooses to get by e-mail, kept on the server. Invitations
 * and password resets are always sent (someone asked for them); the rest follow
 * these choices.
 */
import { z } from 'zod';

export const DIGESTS = ['off', 'daily', 'weekly'] as const;

export const mailChoices = z.object({
  postFailed: z.boolean().describe('a post could not be published'),
  channelReconnect: z.boolean().describe('a channel needs connecting again'),
  accessExpiring: z.boolean().describe("a channel's access ends soon and the network does not let Herald renew it"),
  digest: z.enum(DIGESTS).describe('what was published and what failed, daily or weekly'),
});
export type MailChoices = z.infer<typeof mailChoices>;

/** A person who never chose gets the mails about problems, and no digest. */
export const MAIL_CHOICE_DEFAULTS: MailChoices = { postFailed: true, channelReconnect: true, accessExpiring: true, digest: 'off' };

export const mailChoicesChange = z.strictObject({
  postFailed: z.boolean().optional(),
  channelReconnect: z.boolean().optional(),
  accessExpiring: z.boolean().optional(),
  digest: z.enum(DIGESTS, { error: `must be one of ${DIGESTS.join(', ')}` }).optional(),
});
export type MailChoicesChange = z.infer<typeof mailChoicesChange>;

export const mailSettings = z.object({
  enabled: z.boolean().describe('false: this Herald has no SMTP server (HERALD_SMTP_URL), so links are shown to copy instead'),
  choices: mailChoices,
});
