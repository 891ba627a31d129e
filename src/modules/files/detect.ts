// Decides what an uploaded file is from its name AND its first bytes: a declared type must match the
// content (a `.txt` that is a ZIP is refused). Also makes a safe display name from a client's filename.
import path from 'node:path';

export type FileKind = 'pdf' | 'docx' | 'html' | 'markdown' | 'text' | 'image';

export interface DetectedType {
  kind: FileKind;
  mimetype: string;
  extension: string;
}

/** Kinds whose content is text and can be replaced through PUT .../content. */
export const TEXT_EDITABLE_KINDS: ReadonlySet<FileKind> = new Set(['html', 'markdown', 'text']);

const TEXT_TYPES: Record<string, { kind: FileKind; mimetype: string }> = {
  '.txt': { kind: 'text', mimetype: 'text/plain' },
  '.text': { kind: 'text', mimetype: 'text/plain' },
  '.log': { kind: 'text', mimetype: 'text/plain' },
  '.md': { kind: 'markdown', mimetype: 'text/markdown' },
  '.markdown': { kind: 'markdown', mimetype: 'text/markdown' },
  '.html': { kind: 'html', mimetype: 'text/html' },
  '.htm': { kind: 'html', mimetype: 'text/html' },
  '.csv': { kind: 'text', mimetype: 'text/csv' },
  '.tsv': { kind: 'text', mimetype: 'text/tab-separated-values' },
  '.json': { kind: 'text', mimetype: 'application/json' },
  '.xml': { kind: 'text', mimetype: 'application/xml' },
  '.yaml': { kind: 'text', mimetype: 'application/yaml' },
  '.yml': { kind: 'text', mimetype: 'application/yaml' },
};
const CODE_EXTENSIONS = [
  '.js', '.mjs', '.cjs', '.ts', '.tsx', '.jsx', '.py', '.rb', '.go', '.rs', '.java', '.kt', '.c', '.h', '.cc',
  '.cpp', '.hpp', '.cs', '.php', '.swift', '.scala', '.sh', '.sql', '.css', '.scss', '.toml', '.ini', '.r', '.lua',
];
for (const extension of CODE_EXTENSIONS) TEXT_TYPES[extension] = { kind: 'text', mimetype: 'text/plain' };

const BINARY_TYPES: Record<string, { kind: FileKind; mimetype: string; magic: (head: Buffer) => boolean }> = {
  '.pdf': { kind: 'pdf', mimetype: 'application/pdf', magic: (h) => h.subarray(0, 1024).includes('%PDF-') },
  '.docx': {
    kind: 'docx',
    mimetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    magic: isZip,
  },
  '.png': { kind: 'image', mimetype: 'image/png', magic: (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  '.jpg': { kind: 'image', mimetype: 'image/jpeg', magic: isJpeg },
  '.jpeg': { kind: 'image', mimetype: 'image/jpeg', magic: isJpeg },
  '.gif': { kind: 'image', mimetype: 'image/gif', magic: (h) => h.subarray(0, 4).toString('latin1') === 'GIF8' },
  '.webp': { kind: 'image', mimetype: 'image/webp', magic: (h) => h.subarray(0, 4).toString('latin1') === 'RIFF' && h.subarray(8, 12).toString('latin1') === 'WEBP' },
};

function isZip(head: Buffer): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}
function isJpeg(head: Buffer): boolean {
  return head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
}

/** What binary formats a head looks like, to name them in a mismatch message. */
function sniffBinary(head: Buffer): string | null {
  if (isZip(head)) return 'a ZIP archive';
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'a PDF';
  for (const [extension, type] of Object.entries(BINARY_TYPES)) if (type.kind === 'image' && type.magic(head)) return `an image (${extension})`;
  return null;
}

/** Text means: no NUL byte and valid UTF-8 (a multi-byte character cut at the end of the head is fine). */
export function looksLikeText(head: Buffer, complete: boolean): boolean {
  if (head.includes(0)) return false;
  let sample = head;
  if (!complete) {
    // Back off an incomplete trailing UTF-8 sequence (at most 3 bytes).
    let cut = sample.length;
    for (let i = 1; i <= 3 && i <= sample.length; i += 1) {
      const byte = sample[sample.length - i];
      if ((byte & 0xc0) === 0xc0) {
        cut = sample.length - i;
        break;
      }
      if ((byte & 0x80) === 0) break;
    }
    sample = sample.subarray(0, cut);
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample);
    return true;
  } catch {
    return false;
  }
}

export class TypeMismatch extends Error {}
export class UnsupportedType extends Error {}

/**
 * The type of an upload from its extension, checked against its first bytes.
 * Throws UnsupportedType for extensions the vault does not take, TypeMismatch when the content disagrees.
 */
export function detectType(filename: string, head: Buffer, complete: boolean): DetectedType {
  const extension = path.extname(filename).toLowerCase();
  const binary = BINARY_TYPES[extension];
  if (binary) {
    if (!binary.magic(head)) {
      throw new TypeMismatch(`The file content does not match its type (${extension})`);
    }
    return { kind: binary.kind, mimetype: binary.mimetype, extension };
  }
  const text = TEXT_TYPES[extension];
  if (text) {
    const found = sniffBinary(head);
    if (found || !looksLikeText(head, complete)) {
      throw new TypeMismatch(`The file content does not match its type (${extension})${found ? `: it is ${found}` : ': it is not text'}`);
    }
    return { kind: text.kind, mimetype: text.mimetype, extension };
  }
  throw new UnsupportedType(
    `Unsupported file type${extension ? ` (${extension})` : ''}: upload PDF, DOCX, HTML, Markdown, plain text, CSV, JSON, code or image files`,
  );
}

/**
 * A display name from a client's filename: the last path segment only (`../../x` becomes `x`),
 * without control characters, at most 200 characters. Never used as a storage key.
 */
export function safeDisplayName(raw: string | undefined): string {
  const lastSegment = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = lastSegment
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/^\.+/, '')
    .trim();
  if (!cleaned) return 'file';
  if (cleaned.length <= 200) return cleaned;
  const extension = path.extname(cleaned).slice(0, 20);
  return cleaned.slice(0, 200 - extension.length) + extension;
}
