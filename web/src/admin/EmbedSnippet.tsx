// The embed snippet of a twin, shown under its embedding settings: the one line a page includes, with
// the visitor and launch-token options, and a note when no origin may embed it yet.
import { useState } from 'react';

export function embedSnippet(serviceOrigin: string, publicId: string): string {
  return `<script src="${serviceOrigin}/embed.js" data-public-id="${publicId}" async></script>`;
}

export function EmbedSnippet({ publicId, authorizedUrls }: { publicId: string; authorizedUrls: readonly string[] }) {
  const snippet = embedSnippet(window.location.origin, publicId);
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard?.writeText(snippet).then(() => setCopied(true), () => setCopied(false));
  };
  return (
    <section className="embed-snippet" aria-labelledby="embed-snippet-title">
      <h3 id="embed-snippet-title">Embed snippet</h3>
      <pre>
        <code>{snippet}</code>
      </pre>
      <button type="button" onClick={copy}>
        Copy snippet
      </button>
      {copied && <span role="status"> Copied.</span>}
      <p>
        Visitors chat without an account, under this twin&apos;s caps and pooled credits. To sign a person in, add{' '}
        <code>data-launch-token</code> with a launch token your backend minted, or call <code>DigitalTwin.signIn(token)</code>;{' '}
        <code>data-visitor=&quot;false&quot;</code> opens no visitor session.
      </p>
      {authorizedUrls.length === 0 && <p role="note">No page may embed this twin until its authorized URLs list at least one.</p>}
    </section>
  );
}
