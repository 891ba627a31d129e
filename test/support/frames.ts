// A streamed frame without its place in its answer (seq, historyId), for tests of what a frame says;
// the numbering itself is checked by the resumable answers' tests.
export const unnumbered = ({ seq: _seq, historyId: _historyId, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
