// /admin is reserved for the administration console (a later release); until then it says where the
// administration API is.
export default function AdminPage() {
  return (
    <main id="main" className="page">
      <h1>Administration</h1>
      <p>The administration console comes in a later release. Until then, administrators work with the API under /api/admin; its reference is at <a href="/api/docs">/api/docs</a>.</p>
    </main>
  );
}
