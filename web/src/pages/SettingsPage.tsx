export default function SettingsPage() {
  return (
    <main id="main" className="page">
      <h1>Settings</h1>
    </main>
  );
}
