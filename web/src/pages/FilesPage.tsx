export default function FilesPage() {
  return (
    <main id="main" className="page">
      <h1>Files</h1>
    </main>
  );
}
