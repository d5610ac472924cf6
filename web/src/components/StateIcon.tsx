/**
 * A post's state as a small picture, so states differ in shape and not only in
 * colour (where the state's word does not fit, as in a phone's month view). It is
 * hidden from screen readers: the state's word beside it is what they read.
 */
import type { PostState } from '../api.ts';

const SHAPES: Record<PostState | 'PUBLISHING', string[]> = {
  // A clock: waiting for its time.
  QUEUE: ['M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18', 'M12 7v5l3 2'],
  // An arrow going out.
  PUBLISHING: ['M12 20V5', 'M6 11l6-6l6 6'],
  // A tick.
  PUBLISHED: ['M4 12.5l5 5L20 6.5'],
  // A warning triangle.
  ERROR: ['M12 3L2 20h20z', 'M12 9v5', 'M12 16.5v.5'],
  // A pencil.
  DRAFT: ['M4 20l1-5L16 4l4 4L9 19z', 'M13.5 6.5l4 4'],
};

export function StateIcon({ state }: { state: PostState | 'PUBLISHING' }) {
  return (
    <svg
      className={`state-icon state-${state.toLowerCase()}`}
      width="14"
      height="14"
      viewBox="0 0 24 24"
      aria-hidden="true"
      fill="none"
      stroke="currentColor"
      strokeWidth="2.5"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      {SHAPES[state].map((d) => (
        <path key={d} d={d} />
      ))}
    </svg>
  );
}
