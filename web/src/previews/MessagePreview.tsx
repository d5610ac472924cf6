import { chatMessages } from './message.ts';
import { type FamilyProps, Flags, MediaCell, PostHead, PostText } from './parts.tsx';

/** A chat message (Discord, Slack, Telegram…): the sender, the text, the files whole beneath it. */
export function MessagePreview({ input, picture }: FamilyProps) {
  const shown = chatMessages(input);
  return (
    <div className={`pv-feed pv-message pv-${input.network.identifier}`}>
      <ol className="pv-thread">
        {shown.messages.map((m, i) => (
          <li key={i} className="pv-post pv-bubble" data-testid="preview-post">
            <PostHead picture={picture} name={input.channel.name} />
            <PostText parts={m.text} />
            {m.cells.map((cell, j) => (
              <MediaCell key={j} cell={cell} fit="contain" />
            ))}
          </li>
        ))}
      </ol>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
