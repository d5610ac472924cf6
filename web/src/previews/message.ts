/**
 * Chat networks (Discord, Slack, Telegram, Twitch and Kick chats, a webhook):
 * a message from the channel's name, its text within the limit, and the files
 * below it, each whole (chats do not crop).
 */
import type { TextParts } from './text.ts';
import { textParts } from './text.ts';
import { type Cell, droppedFlag, type Flag, frame, type PreviewInput, textFlags } from './shape.ts';

const WHOLE = { min: 0, max: Number.POSITIVE_INFINITY };

export interface MessageShown {
  messages: { text: TextParts; cells: Cell[] }[];
  flags: Flag[];
}

export function chatMessages(input: PreviewInput): MessageShown {
  const { name, rules } = input.network;
  const items = rules.threads ? input.items : input.items.slice(0, 1);
  const flags: Flag[] = [];
  const messages = items.map((item) => {
    const text = textParts(rules, item.content);
    flags.push(...textFlags(text, name, rules.maxLength), ...droppedFlag(item.media.length, rules.maxMedia, name));
    return { text, cells: item.media.slice(0, rules.maxMedia).map((m) => frame(m, input.sizes[m.path], WHOLE)) };
  });
  if (input.items.length > items.length) flags.push({ key: 'previews.noThread', vars: { network: name } });
  return { messages, flags };
}
