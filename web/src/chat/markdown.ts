// A model's answer as HTML: Markdown (marked), code highlighted (highlight.js, a few common languages),
// then sanitized (DOMPurify) so no HTML in an answer can run script, load a frame or style the page.
// Links open in a new tab without access to this one. Code blocks get a copy button (see Markdown.tsx).
import createDOMPurify, { type DOMPurify } from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import { Marked, type Tokens } from 'marked';

for (const [name, language] of Object.entries({ bash, css, javascript, json, python, sql, typescript, xml })) hljs.registerLanguage(name, language);
hljs.registerAliases(['sh', 'shell'], { languageName: 'bash' });
hljs.registerAliases(['js'], { languageName: 'javascript' });
hljs.registerAliases(['ts'], { languageName: 'typescript' });
hljs.registerAliases(['html'], { languageName: 'xml' });

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function highlight(code: string, lang: string | undefined): { html: string; language: string } {
  const language = lang && hljs.getLanguage(lang) ? lang : '';
  if (language) return { html: hljs.highlight(code, { language }).value, language };
  return { html: escapeHtml(code), language: 'text' };
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }: Tokens.Code) {
      const { html, language } = highlight(text, lang?.split(/\s/)[0]);
      return (
        `<div class="code-block"><div class="code-bar"><span>${escapeHtml(language)}</span>` +
        `<button type="button" class="copy-code" data-copy="code">Copy code</button></div>` +
        `<pre><code class="hljs language-${escapeHtml(language)}">${html}</code></pre></div>`
      );
    },
  },
});

export interface MarkdownRenderer {
  render(markdown: string): string;
}

export function createMarkdownRenderer(window: Window & typeof globalThis): MarkdownRenderer {
  const purify: DOMPurify = createDOMPurify(window);
  purify.addHook('afterSanitizeAttributes', (node) => {
    // An image of an answer gets a text alternative when the model gave none.
    if (node.tagName === 'IMG' && !node.getAttribute('alt')) node.setAttribute('alt', 'Image from the answer');
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  });
  return {
    render(markdown) {
      const html = marked.parse(markdown, { async: false });
      return purify.sanitize(html, {
        FORBID_TAGS: ['style', 'form', 'input', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
        FORBID_ATTR: ['style'],
        ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
      });
    },
  };
}

let shared: MarkdownRenderer | null = null;
export function renderMarkdown(markdown: string): string {
  shared ??= createMarkdownRenderer(window);
  return shared.render(markdown);
}
