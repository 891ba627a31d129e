// Chunking by structure (headings, paragraphs, then sentences) with overlap, and the sanitizer
// each chunk goes through before it is stored: Unicode normalised, control characters, invisible
// characters and scripts dropped, whitespace collapsed.

export const CHUNK_OPTIONS = { targetChars: 1_000, maxChars: 1_400, overlapChars: 150 };

/** Splits text into blocks: a Markdown heading starts a new section; blank lines end paragraphs. */
function blocks(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const block = current.join('\n').trim();
    if (block) out.push(block);
    current = [];
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*$/.test(line)) {
      flush();
    } else if (/^#{1,6}\s/.test(line)) {
      flush();
      current.push(line);
    } else {
      current.push(line);
    }
  }
  flush();
  return out;
}

/** A block longer than maxChars is cut at sentence ends, then at spaces, then hard. */
function splitLong(block: string, maxChars: number): string[] {
  if (block.length <= maxChars) return [block];
  const sentences = block.match(/[^.!?\n]+(?:[.!?]+|\n|$)\s*/g) ?? [block];
  const pieces: string[] = [];
  let piece = '';
  for (const sentence of sentences) {
    if (piece && piece.length + sentence.length > maxChars) {
      pieces.push(piece.trim());
      piece = '';
    }
    if (sentence.length > maxChars) {
      for (let start = 0; start < sentence.length; ) {
        let end = Math.min(sentence.length, start + maxChars);
        const space = sentence.lastIndexOf(' ', end);
        if (end < sentence.length && space > start + maxChars / 2) end = space;
        pieces.push(sentence.slice(start, end).trim());
        start = end;
      }
    } else {
      piece += sentence;
    }
  }
  if (piece.trim()) pieces.push(piece.trim());
  return pieces.filter(Boolean);
}

/** The tail of a chunk carried into the next one, starting at a word boundary. */
function overlapTail(chunk: string, overlapChars: number): string {
  if (overlapChars <= 0 || chunk.length <= overlapChars) return '';
  const tail = chunk.slice(-overlapChars);
  const space = tail.indexOf(' ');
  return space >= 0 ? tail.slice(space + 1) : tail;
}

export function chunkText(text: string, options = CHUNK_OPTIONS): string[] {
  const chunks: string[] = [];
  let current = '';
  let fresh = false; // does current hold anything beyond the overlap carried in?
  const emit = () => {
    if (fresh && current.trim()) chunks.push(current.trim());
    current = overlapTail(current, options.overlapChars);
    fresh = false;
  };
  for (const block of blocks(text)) {
    const isHeading = /^#{1,6}\s/.test(block);
    // A new section starts a new chunk once the current one has some body.
    if (isHeading && fresh && current.length > options.targetChars / 3) emit();
    for (const piece of splitLong(block, options.maxChars - options.overlapChars)) {
      if (fresh && current.length + piece.length + 2 > options.targetChars) emit();
      current = current ? `${current}\n\n${piece}` : piece;
      fresh = true;
    }
  }
  if (fresh) emit();
  return chunks;
}

const SCRIPT_BLOCKS = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const INVISIBLE = /[\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff]/g;

export function sanitizeChunk(text: string): string {
  return text
    .normalize('NFKC')
    .replace(SCRIPT_BLOCKS, ' ')
    .replace(/javascript:/gi, '')
    .replace(CONTROL, '')
    .replace(INVISIBLE, '')
    .replace(/\t/g, ' ')
    .replace(/[ \u00a0]{2,}/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
