import { t } from '../i18n.ts';
import { type FamilyProps, Flags, MediaCell, PostHead, PostText } from './parts.tsx';
import { pin } from './pinterest.ts';

/** Pinterest: the pin's picture, title and description, and the board it goes to. */
export function PinterestPreview({ input, picture }: FamilyProps) {
  const shown = pin(input);
  return (
    <div className="pv-feed pv-pinterest">
      <div className="pv-post pv-pin" data-testid="preview-post">
        {shown.cell && <MediaCell cell={shown.cell} />}
        {shown.title && <strong className="pv-title">{shown.title}</strong>}
        <PostText parts={shown.description} />
        <PostHead picture={picture} name={input.channel.name} extra={shown.board ? t('previews.board', { board: shown.board }) : t('previews.noBoard')} />
      </div>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
