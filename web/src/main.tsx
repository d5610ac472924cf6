/** The web application: routes, the data cache, and the sign-in gate. */
import { StrictMode, Suspense, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes, useLocation } from 'react-router-dom';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiError } from './api.ts';
import { useLiveUpdates, useSession } from './data.ts';
import { Layout } from './components/Layout.tsx';
import { ErrorNote, Loading } from './components/ui.tsx';
import {
  AttentionPage,
  CalendarPage,
  ChannelsPage,
  Composer,
  FeedsPage,
  ForgotPassword,
  ImportPage,
  MediaPage,
  PostPage,
  PreviewLinkPage,
  ResetPassword,
  SeriesListPage,
  SeriesPage,
  SettingsPage,
  SignIn,
  SignUp,
} from './pages/lazy.ts';
import { usePageHeading } from './page-heading.ts';
import { useLanguage } from './i18n.ts';
import { browserLanguage, showLanguage } from './language.ts';
import { usePersonPreferences } from './prefs.ts';
import './styles.css';

const client = new QueryClient({
  defaultOptions: {
    // A failing request shows its message at once; the person decides to try again.
    queries: { retry: (count, error) => count < 1 && !(error instanceof ApiError && error.status >= 400 && error.status < 500), refetchOnWindowFocus: true },
  },
});

function SignedIn({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();
  useLiveUpdates(session.isSuccess);
  const prefsReady = usePersonPreferences(session.isSuccess);
  if (session.isPending || (session.isSuccess && !prefsReady)) return <Loading />;
  if (session.error instanceof ApiError && session.error.status === 401)
    return <Navigate to="/signin" replace state={{ from: location.pathname + location.search }} />;
  if (session.error) return <ErrorNote error={session.error} onRetry={() => session.refetch()} />;
  // The menu stays while a page's code arrives.
  return (
    <Layout>
      <Suspense fallback={<Loading />}>{children}</Suspense>
    </Layout>
  );
}

/** The pages; the server answers each of these paths with this application (src/api/web-app.ts). */
function App() {
  usePageHeading();
  // A new language draws every page again, in place: no reload, focus kept.
  useLanguage();
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/signin" element={<SignIn />} />
        <Route path="/signup" element={<SignUp />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        {/* A preview link: for visitors without an account, so outside the sign-in gate. */}
        <Route path="/p/:token" element={<PreviewLinkPage />} />
        <Route
          path="/"
          element={
            <SignedIn>
              <CalendarPage />
            </SignedIn>
          }
        />
        <Route
          path="/compose"
          element={
            <SignedIn>
              <Composer />
            </SignedIn>
          }
        />
        <Route
          path="/posts/:id"
          element={
            <SignedIn>
              <PostPage />
            </SignedIn>
          }
        />
        <Route
          path="/posts/:id/edit"
          element={
            <SignedIn>
              <Composer />
            </SignedIn>
          }
        />
        <Route
          path="/channels"
          element={
            <SignedIn>
              <ChannelsPage />
            </SignedIn>
          }
        />
        <Route
          path="/media"
          element={
            <SignedIn>
              <MediaPage />
            </SignedIn>
          }
        />
        <Route
          path="/series"
          element={
            <SignedIn>
              <SeriesListPage />
            </SignedIn>
          }
        />
        <Route
          path="/series/:id"
          element={
            <SignedIn>
              <SeriesPage />
            </SignedIn>
          }
        />
        <Route
          path="/series/:seriesId/edit"
          element={
            <SignedIn>
              <Composer />
            </SignedIn>
          }
        />
        <Route
          path="/feeds"
          element={
            <SignedIn>
              <FeedsPage />
            </SignedIn>
          }
        />
        <Route
          path="/import"
          element={
            <SignedIn>
              <ImportPage />
            </SignedIn>
          }
        />
        <Route
          path="/attention"
          element={
            <SignedIn>
              <AttentionPage />
            </SignedIn>
          }
        />
        <Route path="/settings" element={<Navigate to="/settings/developers" replace />} />
        <Route
          path="/settings/:section"
          element={
            <SignedIn>
              <SettingsPage />
            </SignedIn>
          }
        />
        <Route path="*" element={<Navigate to="/" replace />} />
      </Routes>
    </Suspense>
  );
}

// FullCalendar's theme reads the scheme from an attribute: follow the system's setting.
const dark = window.matchMedia('(prefers-color-scheme: dark)');
const followScheme = () => (document.documentElement.dataset.colorScheme = dark.matches ? 'dark' : 'light');
followScheme();
dark.addEventListener('change', followScheme);
const render = () =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <QueryClientProvider client={client}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </StrictMode>,
  );
// The browser's language until the person's own is known; English when its catalogue cannot be fetched.
showLanguage(browserLanguage())
  .catch(() => undefined)
  .finally(render);
