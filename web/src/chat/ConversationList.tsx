// The conversations of this twin, newest first, grouped from the history records; search by what was
// asked or answered; delete a whole conversation.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { NavLink, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import type { HistoryItem } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';

export interface Conversation {
  id: string;
  title: string;
  updated: string;
  records: HistoryItem[];
}

export function groupConversations(items: HistoryItem[]): Conversation[] {
  const byId = new Map<string, Conversation>();
  for (const item of items) {
    const existing = byId.get(item.conversationId);
    if (existing) {
      existing.records.push(item);
      // Newest first: the title is the first question asked, the last item seen.
      existing.title = item.question;
    } else byId.set(item.conversationId, { id: item.conversationId, title: item.question, updated: item.created, records: [item] });
  }
  return [...byId.values()];
}

export const HISTORY_KEY = ['history'] as const;

export function ConversationList({ currentId }: { currentId?: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const [error, setError] = useState<unknown>(null);
  const history = useQuery({ queryKey: [...HISTORY_KEY, 'list'], queryFn: () => unwrap(api.GET('/api/user/history', { params: { query: { page: 1, limit: 100 } } })) });
  const conversations = useMemo(() => {
    const all = groupConversations(history.data?.data ?? []);
    const needle = search.trim().toLowerCase();
    if (!needle) return all;
    return all.filter((conversation) => conversation.records.some((record) => record.question.toLowerCase().includes(needle) || record.answer.toLowerCase().includes(needle)));
  }, [history.data, search]);

  const remove = async (conversation: Conversation) => {
    if (!window.confirm(`Delete the conversation “${conversation.title.slice(0, 60)}”?`)) return;
    setError(null);
    try {
      const records = await unwrap(api.GET('/api/user/history', { params: { query: { conversationId: conversation.id, limit: 100 } } }));
      for (const record of records.data) await unwrap(api.DELETE('/api/user/history/{id}', { params: { path: { id: record._id } } }));
      await queryClient.invalidateQueries({ queryKey: HISTORY_KEY });
      if (conversation.id === currentId) navigate('/');
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <aside className="sidebar" aria-label="Conversations">
      <NavLink to="/" className="new-chat" end>
        + New conversation
      </NavLink>
      <label className="search">
        <span className="visually-hidden">Search conversations</span>
        <input type="search" placeholder="Search conversations" value={search} onChange={(event) => setSearch(event.target.value)} />
      </label>
      <ErrorNotice error={history.error ?? error} />
      <ul className="conversation-list">
        {conversations.map((conversation) => (
          <li key={conversation.id} className={conversation.id === currentId ? 'current' : undefined}>
            <NavLink to={`/c/${conversation.id}`} aria-current={conversation.id === currentId ? 'page' : undefined}>
              {conversation.title || 'Untitled'}
            </NavLink>
            <button type="button" className="icon-button" aria-label={`Delete conversation: ${conversation.title}`} onClick={() => void remove(conversation)}>
              ×
            </button>
          </li>
        ))}
        {history.isSuccess && conversations.length === 0 && <li className="empty">{search ? 'No conversation matches.' : 'No conversations yet.'}</li>}
      </ul>
    </aside>
  );
}
