/**
 * Each page's code, fetched when the page is first shown: the first page loads
 * the application's frame and its own page only (FullCalendar comes with the
 * calendar, the composer and its previews when it opens).
 */
import { lazy, type ComponentType } from 'react';

/** A page exported by name from a module that is loaded on first use. */
function page<M, K extends keyof M>(load: () => Promise<M>, name: K) {
  return lazy(async () => ({ default: (await load())[name] as ComponentType }));
}

export const SignIn = page(() => import('./Auth.tsx'), 'SignIn');
export const SignUp = page(() => import('./Auth.tsx'), 'SignUp');
export const ForgotPassword = page(() => import('./PasswordReset.tsx'), 'ForgotPassword');
export const ResetPassword = page(() => import('./PasswordReset.tsx'), 'ResetPassword');
export const CalendarPage = page(() => import('./Calendar.tsx'), 'CalendarPage');
export const Composer = page(() => import('./Composer.tsx'), 'Composer');
export const PostPage = page(() => import('./Post.tsx'), 'PostPage');
export const ChannelsPage = page(() => import('./Channels.tsx'), 'ChannelsPage');
export const MediaPage = page(() => import('./Media.tsx'), 'MediaPage');
export const AttentionPage = page(() => import('./Attention.tsx'), 'AttentionPage');
export const FeedsPage = page(() => import('./Feeds.tsx'), 'FeedsPage');
export const ImportPage = page(() => import('./Import.tsx'), 'ImportPage');
export const SeriesListPage = page(() => import('./Series.tsx'), 'SeriesListPage');
export const SeriesPage = page(() => import('./Series.tsx'), 'SeriesPage');
export const SettingsPage = page(() => import('./Settings.tsx'), 'SettingsPage');
export const PreviewLinkPage = page(() => import('./PreviewLink.tsx'), 'PreviewLinkPage');
