/**
 * Each page's name where people and screen readers look for it: the window's
 * title follows the page's heading (its h1), and after moving to another page
 * focus goes to that heading, so a screen reader says where the person landed
 * and the next Tab starts from the page's top, not from the link they used.
 */
import { useEffect, useRef } from 'react';
import { useLocation } from 'react-router-dom';
import { t } from './i18n.ts';

export function usePageHeading(): void {
  const { pathname } = useLocation();
  const firstPage = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: each new page (pathname) starts the watch again
  useEffect(() => {
    // On the first page the browser starts at the top itself; focus moves only when the person moved.
    const moveFocus = !firstPage.current;
    firstPage.current = false;
    let focused = false;
    // Pages load their data first: the heading (and its text) may come later, so look again as the page changes.
    const follow = () => {
      const heading = document.querySelector('h1');
      if (!heading) return;
      const name = heading.textContent?.trim();
      const title = name ? `${name} · ${t('app.name')}` : t('app.name');
      if (document.title !== title) document.title = title;
      if (moveFocus && !focused) {
        focused = true;
        heading.tabIndex = -1;
        heading.focus();
      }
    };
    follow();
    const observer = new MutationObserver(follow);
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [pathname]);
}
