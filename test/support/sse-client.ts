// Reads a text/event-stream response the way a browser client would: frames separated by a blank
// line, `data: <JSON>` lines parsed, `:` comment lines (heartbeats) counted apart.
export interface SseReader {
  /** The next data frame, or null when the stream ended. */
  next(): Promise<Record<string, unknown> | null>;
  /** All remaining data frames until the stream ends. */
  rest(): Promise<Array<Record<string, unknown>>>;
  /** Comment lines seen so far (`: ping`). */
  readonly comments: string[];
  /** The `id:` of the last frame next() returned (what a browser would send back as Last-Event-ID). */
  readonly lastEventId: string | undefined;
  cancel(): Promise<void>;
}

export function readSse(response: Response): SseReader {
  if (!response.body) throw new Error('response has no body');
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const comments: string[] = [];
  const frames: Array<Record<string, unknown>> = [];
  const ids: Array<string | undefined> = [];
  let lastEventId: string | undefined;
  let buffer = '';
  let ended = false;

  async function fill(): Promise<void> {
    while (frames.length === 0 && !ended) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const data: string[] = [];
        let id: string | undefined;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
          else if (line.startsWith('data:')) data.push(line.slice(5));
        }
        if (data.length > 0) {
          frames.push(JSON.parse(data.join('\n')) as Record<string, unknown>);
          ids.push(id);
        }
      }
    }
  }

  return {
    comments,
    get lastEventId() {
      return lastEventId;
    },
    async next() {
      await fill();
      const frame = frames.shift() ?? null;
      if (frame) lastEventId = ids.shift() ?? lastEventId;
      return frame;
    },
    async rest() {
      const all: Array<Record<string, unknown>> = [];
      for (let frame = await this.next(); frame !== null; frame = await this.next()) all.push(frame);
      return all;
    },
    async cancel() {
      await reader.cancel().catch(() => {});
    },
  };
}
