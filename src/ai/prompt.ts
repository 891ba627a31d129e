// The prompt's shared format and measures: the context sections every model is given in its system
// text (passages and memories in XML-like tags, which real models read well and the built-in model
// parses back), the rough token estimate of usage reporting, and the upper bound of a prompt's tokens
// that a priced turn holds credits for.
import type { ModelMessage } from 'ai';

export interface ContextSections {
  passages?: string[];
  memories?: string[];
}

/** XML-like tags around each item: real models read them well, and the built-in model parses them back. */
export const CONTEXT_TAGS = { passage: 'passage', memory: 'memory' } as const;

const PASSAGES_HEADING = '## Passages from the files';
const MEMORIES_HEADING = '## Memories';

/** Rough token count used for usage reporting: one token per four characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Builds the system-text block the engine appends; empty when there is nothing to give. */
export function formatContextSections({ passages = [], memories = [] }: ContextSections): string {
  const blocks: string[] = [];
  const section = (heading: string, tag: string, items: string[]): void => {
    const kept = items.map((item) => item.trim()).filter((item) => item !== '');
    if (kept.length === 0) return;
    const body = kept.map((item, i) => `<${tag} n="${i + 1}">\n${neutraliseClosingTag(item, tag)}\n</${tag}>`);
    blocks.push([heading, ...body].join('\n'));
  };
  section(PASSAGES_HEADING, CONTEXT_TAGS.passage, passages);
  section(MEMORIES_HEADING, CONTEXT_TAGS.memory, memories);
  return blocks.join('\n\n');
}

/** Reads passages and memories back out of a system text built with formatContextSections. */
export function parseContextSections(system: string): Required<ContextSections> {
  return {
    passages: extractTagged(system, CONTEXT_TAGS.passage),
    memories: extractTagged(system, CONTEXT_TAGS.memory),
  };
}

/**
 * The most tokens a prompt of these texts can count: a token is at least one UTF-8 byte in the byte-level
 * tokenizers chat models use, plus the framing each message and the prompt add (generous).
 */
export function promptTokenBound(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8') + MESSAGE_FRAMING_TOKENS, PROMPT_FRAMING_TOKENS);
}
const MESSAGE_FRAMING_TOKENS = 8;
const PROMPT_FRAMING_TOKENS = 16;

/** All text the model is given, for estimates. */
export function promptText(system: string | undefined, messages: ModelMessage[]): string {
  const parts: string[] = system ? [system] : [];
  for (const message of messages) {
    if (typeof message.content === 'string') parts.push(message.content);
    else parts.push(JSON.stringify(message.content));
  }
  return parts.join('\n');
}

function extractTagged(text: string, tag: string): string[] {
  const pattern = new RegExp(`<${tag}(?:\\s[^>]*)?>\\n?([\\s\\S]*?)\\n?</${tag}>`, 'g');
  return [...text.matchAll(pattern)].map((m) => m[1].trim()).filter((item) => item !== '');
}

/** A closing tag inside an item would cut it short when parsed back. */
function neutraliseClosingTag(item: string, tag: string): string {
  return item.replace(new RegExp(`</${tag}>`, 'gi'), `<\\/${tag}>`);
}
