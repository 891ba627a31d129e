// The people's area (chat, files, memory, settings) with its layout and this tab's chat socket: its own
// bundle, loaded for every signed-in path but /admin, so the console loads none of it.
import { Suspense } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { LiveProvider } from './chat/live';
import { ScreenBoundary } from './components/ScreenBoundary';
import { AppShell } from './layout/AppShell';
import { ChatPage } from './pages/ChatPage';
import { filesPage, memoryPage, settingsPage } from './screens';

const FilesPage = filesPage.Component;
const MemoryPage = memoryPage.Component;
const SettingsPage = settingsPage.Component;

export default function ChatArea() {
  return (
    <LiveProvider>
      <AppShell>
        <ScreenBoundary>
          <Suspense fallback={<p className="loading" role="status">Loading…</p>}>
            <Routes>
              <Route index element={<ChatPage />} />
              <Route path="c/:conversationId" element={<ChatPage />} />
              <Route path="files" element={<FilesPage />} />
              <Route path="memory" element={<MemoryPage />} />
              <Route path="settings" element={<SettingsPage />} />
              <Route path="*" element={<Navigate to="/" replace />} />
            </Routes>
          </Suspense>
        </ScreenBoundary>
      </AppShell>
    </LiveProvider>
  );
}
