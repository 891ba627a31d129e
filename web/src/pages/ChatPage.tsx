// The chat: conversation list, assistant picker, the conversation's answers (from history) and the
// turns of this visit as they stream, the composer with send and stop.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import type { HistoryItem } from '../api/types';
import { ApprovalCards } from '../chat/ApprovalCards';
import { ask, type AskEvent, type AskHandle } from '../chat/ask';
import { AssistantPicker } from '../chat/AssistantPicker';
import { VoiceCall } from '../chat/VoiceCall';
import { ConversationList, HISTORY_KEY } from '../chat/ConversationList';
import { DictationButton } from '../chat/Dictation';
import { useLiveSocket } from '../chat/live';
import { Markdown } from '../chat/Markdown';
import { Sources } from '../chat/Sources';
import { applyStreamEvent, EMPTY_ANSWER_NOTICE, initialAnswer, settleCancelled, type AnswerState, type ApprovalCard } from '../chat/stream-assembly';
import { cancelAnswer, followAnswer, runningAnswers } from '../chat/resume';
import { askDeps } from '../chat/transports';
import { ErrorNotice } from '../components/ErrorNotice';
import { useCompactMode } from '../layout/AppShell';
import { useProfile } from '../session';

/** The twin's suggested questions (its administrators set them): those for any assistant or the one chosen. */
function SuggestedQuestions({ assistantId, onPick }: { assistantId: string; onPick: (question: string) => void }) {
  const questions = useQuery({ queryKey: ['suggested-questions'], queryFn: () => unwrap(api.GET('/api/user/questions')) });
  const shown = (questions.data?.data ?? []).filter((question) => !question.assistantId || question.assistantId === assistantId);
  if (shown.length === 0) return null;
  return (
    <ul className="suggested-questions" aria-label="Suggested questions">
      {shown.map((question) => (
        <li key={question._id}>
          <button type="button" className="button-secondary" onClick={() => onPick(question.text)}>
            {question.text}
          </button>
        </li>
      ))}
    </ul>
  );
}

interface Turn {
  key: number;
  question: string;
  answer: AnswerState;
}

export function ChatPage() {
  const { conversationId } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const link = useLiveSocket();
  const compact = useCompactMode();
  const [assistantId, setAssistantId] = useState('');
  const twinId = useProfile().institution?._id;
  // Another twin has other assistants: start again from the standard one.
  useEffect(() => setAssistantId(''), [twinId]);
  const [draft, setDraft] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [cards, setCards] = useState<ApprovalCard[]>([]);
  const [decided, setDecided] = useState<string[]>([]);
  const active = useRef<AskHandle | null>(null);
  const adopted = useRef<string | undefined>(undefined);
  const nextKey = useRef(1);
  const input = useRef<HTMLTextAreaElement>(null);

  const records = useQuery({
    queryKey: [...HISTORY_KEY, 'conversation', conversationId],
    queryFn: () => unwrap(api.GET('/api/user/history', { params: { query: { conversationId, limit: 100 } } })),
    enabled: Boolean(conversationId),
  });
  const saved = useMemo(() => [...(records.data?.data ?? [])].sort((a, b) => a.created.localeCompare(b.created)), [records.data]);

  // Another conversation opened: forget this visit's turns (unless it is the one our first answer started).
  useEffect(() => {
    if (conversationId && conversationId === adopted.current) return;
    active.current?.stop();
    active.current = null;
    setTurns([]);
  }, [conversationId]);

  const streaming = turns.some((turn) => turn.answer.status === 'waiting' || turn.answer.status === 'streaming');

  const eventHandler = (update: (change: (answer: AnswerState) => AnswerState) => void) => (event: AskEvent) => {
    if (event.kind === 'approval') setCards((current) => [...current, event.card]);
    else if (event.kind === 'approval-decided') setDecided((current) => [...current, event.approvalId]);
    else if (event.kind === 'transport') return;
    else if (event.kind === 'complete') update((answer) => settleCancelled(answer, event));
    else update((answer) => applyStreamEvent(answer, event));
  };

  // An answer still running (this page was reloaded mid-answer, or another tab asked): follow it live
  // here; Stop cancels it wherever it runs. On the start page, open the conversation it belongs to.
  useEffect(() => {
    if (active.current) return;
    const abort = new AbortController();
    void runningAnswers().then((running) => {
      if (abort.signal.aborted || active.current) return;
      const answer = conversationId ? running.find((record) => record.conversationId === conversationId) : running[0];
      if (!answer) return;
      if (!conversationId) {
        navigate(`/c/${answer.conversationId}${compact ? '?embed=1' : ''}`);
        return;
      }
      const key = nextKey.current++;
      setTurns((current) => [...current, { key, question: answer.question, answer: { ...initialAnswer(), status: 'streaming', historyId: answer._id } }]);
      const update = (change: (state: AnswerState) => AnswerState) =>
        setTurns((current) => current.map((turn) => (turn.key === key ? { ...turn, answer: change(turn.answer) } : turn)));
      const onEvent = eventHandler(update);
      const finished = followAnswer(answer._id, 0, abort.signal, onEvent).catch((error: unknown) => {
        if (!abort.signal.aborted) onEvent({ kind: 'failed', error });
      });
      const handle: AskHandle = {
        finished,
        stop() {
          onEvent({ kind: 'stopped' });
          void cancelAnswer(answer._id);
        },
      };
      active.current = handle;
      void finished.then(async () => {
        if (active.current === handle) active.current = null;
        await queryClient.invalidateQueries({ queryKey: HISTORY_KEY });
      });
    });
    return () => abort.abort();
    // Once per conversation opened.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [conversationId]);

  const send = (question: string) => {
    const text = question.trim();
    if (!text || streaming) return;
    const key = nextKey.current++;
    setTurns((current) => [...current, { key, question: text, answer: initialAnswer() }]);
    const update = (change: (answer: AnswerState) => AnswerState) =>
      setTurns((current) => current.map((turn) => (turn.key === key ? { ...turn, answer: change(turn.answer) } : turn)));
    const handle = ask(askDeps(link), { question: text, assistantId: assistantId || undefined, conversationId }, eventHandler(update));
    active.current = handle;
    void handle.finished.then(async () => {
      if (active.current === handle) active.current = null;
      await queryClient.invalidateQueries({ queryKey: HISTORY_KEY });
      setTurns((current) => {
        const done = current.find((turn) => turn.key === key);
        const started = done?.answer.conversationId;
        // Only while the person is still on the start page: the browser's address moves at once when they
        // go elsewhere, before this page is gone (the next page may still be loading), and going to the
        // conversation then would take them back from where they went.
        if (started && !conversationId && window.location.pathname === '/') {
          adopted.current = started;
          navigate(`/c/${started}${compact ? '?embed=1' : ''}`);
        }
        return current;
      });
    });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(draft);
    setDraft('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send(draft);
      setDraft('');
    }
  };

  const savedIds = new Set(saved.map((record) => record._id));
  // A settled turn gives way to its saved record (in the history's order); a turn still answering stays.
  const liveTurns = turns.filter(
    (turn) => !turn.answer.historyId || !savedIds.has(turn.answer.historyId) || turn.answer.status === 'waiting' || turn.answer.status === 'streaming',
  );
  const shownSaved = saved.filter((record) => !liveTurns.some((turn) => turn.answer.historyId === record._id));
  const lastQuestion = liveTurns.at(-1)?.question ?? shownSaved.at(-1)?.question;

  return (
    <div className={compact ? 'chat chat-compact' : 'chat'}>
      {!compact && <ConversationList currentId={conversationId} />}
      <main id="main" className="chat-main">
        <h1 className="visually-hidden">Chat</h1>
        <div className="chat-toolbar">
          <AssistantPicker value={assistantId} onChange={setAssistantId} />
          <VoiceCall assistantId={assistantId} />
        </div>
        <ApprovalCards extra={cards} decided={decided} />
        <section className="messages" aria-label="Conversation">
          <ErrorNotice error={records.error} />
          {shownSaved.length === 0 && liveTurns.length === 0 && !records.isLoading && (
            <div className="welcome">
              <h2>What would you like to know?</h2>
              <p>Ask a question below. Answers can use your files and memories.</p>
              <SuggestedQuestions assistantId={assistantId} onPick={send} />
            </div>
          )}
          {shownSaved.map((record) => (
            <SavedExchange key={record._id} record={record} onRetry={() => send(record.question)} />
          ))}
          {liveTurns.map((turn, index) => (
            <LiveExchange
              key={turn.key}
              turn={turn}
              onStop={() => active.current?.stop()}
              onRetry={() => send(turn.question)}
              isLast={index === liveTurns.length - 1}
            />
          ))}
        </section>
        <form className="composer" onSubmit={submit}>
          <label htmlFor="question" className="visually-hidden">
            Your question
          </label>
          <textarea
            id="question"
            ref={input}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
            placeholder="Ask a question (Enter sends, Shift+Enter starts a new line)"
            rows={2}
          />
          <div className="composer-actions">
            {streaming ? (
              <button type="button" className="button-danger" onClick={() => active.current?.stop()}>
                Stop
              </button>
            ) : (
              <>
                <DictationButton onText={(text) => (setDraft((current) => (current.trim() ? `${current.trimEnd()} ${text}` : text)), input.current?.focus())} />
                {lastQuestion && (
                  <button type="button" className="button-secondary" onClick={() => send(lastQuestion)}>
                    Regenerate
                  </button>
                )}
                <button type="submit" disabled={!draft.trim()}>
                  Send
                </button>
              </>
            )}
          </div>
        </form>
      </main>
    </div>
  );
}

function Question({ text }: { text: string }) {
  return (
    <div className="message message-question">
      <span className="visually-hidden">You asked:</span>
      <p>{text}</p>
    </div>
  );
}

function EmptyNotice({ onRetry }: { onRetry(): void }) {
  return (
    <div className="notice" role="status">
      <p>{EMPTY_ANSWER_NOTICE}</p>
      <button type="button" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}

function SavedExchange({ record, onRetry }: { record: HistoryItem; onRetry(): void }) {
  const empty = record.answer === EMPTY_ANSWER_NOTICE;
  return (
    <article className="exchange">
      <Question text={record.question} />
      <div className="message message-answer" data-status={record.status}>
        <span className="visually-hidden">Answer:</span>
        {empty ? <EmptyNotice onRetry={onRetry} /> : <Markdown text={record.answer} />}
        {record.status === 'cancelled' && <p className="muted">Stopped.</p>}
        <AnswerFooter historyId={record._id} text={record.answer} sources={record.hasRagSearch ? record.ragSearchCount : 0} rating={record.feedback?.rating} />
      </div>
    </article>
  );
}

function LiveExchange({ turn, onStop, onRetry, isLast }: { turn: Turn; onStop(): void; onRetry(): void; isLast: boolean }) {
  const { answer } = turn;
  const busy = answer.status === 'waiting' || answer.status === 'streaming';
  return (
    <article className="exchange">
      <Question text={turn.question} />
      <div className="message message-answer" aria-live="polite" aria-busy={busy} data-status={answer.status}>
        <span className="visually-hidden">Answer:</span>
        {answer.status === 'waiting' && <p className="muted typing">Thinking…</p>}
        {answer.tools.filter((tool) => tool.status === 'started').map((tool) => (
          <p key={tool.name} className="muted">
            Using {tool.name === 'retrieval' ? 'your files' : tool.name}…
          </p>
        ))}
        {answer.emptyNotice ? <EmptyNotice onRetry={onRetry} /> : answer.text && <Markdown text={answer.text} />}
        {answer.status === 'cancelled' && <p className="muted">Stopped.</p>}
        {answer.status === 'failed' && <ErrorNotice error={answer.error} onRetry={isLast ? onRetry : undefined} />}
        {busy && isLast && (
          <button type="button" className="button-link" onClick={onStop}>
            Stop answering
          </button>
        )}
        {answer.historyId && !busy && <AnswerFooter historyId={answer.historyId} text={answer.text} />}
      </div>
    </article>
  );
}

function AnswerFooter({ historyId, text, sources, rating }: { historyId: string; text: string; sources?: number; rating?: string }) {
  const queryClient = useQueryClient();
  const [given, setGiven] = useState<string | undefined>(rating);
  const [error, setError] = useState<unknown>(null);
  const [copied, setCopied] = useState(false);
  const record = useQuery({
    queryKey: ['history', 'record', historyId],
    queryFn: () => unwrap(api.GET('/api/user/history/{id}', { params: { path: { id: historyId } } })),
    enabled: sources === undefined,
  });
  const sourceCount = sources ?? record.data?.data.ragSearchCount ?? 0;
  const feedback = async (value: 'up' | 'down') => {
    setError(null);
    try {
      await unwrap(api.POST('/api/user/history/{id}/feedback', { params: { path: { id: historyId } }, body: { rating: value } }));
      setGiven(value);
      await queryClient.invalidateQueries({ queryKey: HISTORY_KEY });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <div className="answer-footer">
      <div className="button-row">
        <button
          type="button"
          className="icon-button"
          onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="icon-button" aria-pressed={given === 'up'} onClick={() => void feedback('up')}>
          Helpful
        </button>
        <button type="button" className="icon-button" aria-pressed={given === 'down'} onClick={() => void feedback('down')}>
          Not helpful
        </button>
      </div>
      {sourceCount > 0 && <Sources historyId={historyId} count={sourceCount} />}
      <ErrorNotice error={error} />
    </div>
  );
}
