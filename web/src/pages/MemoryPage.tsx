export default function MemoryPage() {
  return (
    <main id="main" className="page">
      <h1>Memory</h1>
    </main>
  );
}
