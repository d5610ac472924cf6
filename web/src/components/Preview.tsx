/** How a post will look on one network: the account, the text (what goes past the limit marked), media and replies. */
import type { Channel, Network } from '../api.ts';
import { cutTo, type ItemDraft } from '../composer-rules.ts';
import { countText } from '../../../src/providers/text-counting.ts';
import { Avatar } from './ui.tsx';
import { Thumb } from './MediaPicker.tsx';

/** What a preview needs of a channel and a network (the preview link's page has no more than this). */
type Shown = { channel: Pick<Channel, 'id' | 'name' | 'picture' | 'profile'>; network: Pick<Network, 'identifier' | 'rules'>; items: ItemDraft[] };

export function Preview({ channel, network, items }: Shown) {
  const shown = network.rules.threads ? items : items.slice(0, 1);
  return (
    <div className={`preview preview-${network.identifier}`} data-testid={`preview-${channel.id}`}>
      {shown.map((item, i) => {
        const over = countText(network.rules.counting, item.content) > network.rules.maxLength;
        const fits = over ? cutTo(network, item.content, network.rules.maxLength) : item.content;
        return (
          <article key={i} className="preview-item">
            <header>
              <Avatar src={channel.picture} name={channel.name} size={32} />
              <strong>{channel.profile ? `@${channel.profile}` : channel.name}</strong>
            </header>
            <p className="preview-text">
              {fits}
              {over && <mark className="overflow">{item.content.slice(fits.length)}</mark>}
            </p>
            {item.media.length > 0 && (
              <div className={`preview-media n${Math.min(item.media.length, 4)}`}>
                {item.media.slice(0, network.rules.maxMedia).map((m, j) => (
                  <Thumb key={j} item={m} />
                ))}
              </div>
            )}
          </article>
        );
      })}
    </div>
  );
}
