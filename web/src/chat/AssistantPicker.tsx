// Exactly the assistants the caller may pick (GET /api/user/assistants), favorites first; a star adds
// or removes the chosen one from the favorites.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { Assistant } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile, useSession } from '../session';

export function favoriteIds(favorites: unknown[] | undefined): Set<string> {
  return new Set((favorites ?? []).map((entry) => (typeof entry === 'string' ? entry : String((entry as { _id?: string })?._id ?? ''))));
}

export function orderAssistants(assistants: Assistant[], favorites: Set<string>): { favorites: Assistant[]; others: Assistant[] } {
  const byName = (a: Assistant, b: Assistant) => a.name.localeCompare(b.name);
  return {
    favorites: assistants.filter((assistant) => favorites.has(assistant._id)).sort(byName),
    others: assistants.filter((assistant) => !favorites.has(assistant._id)).sort(byName),
  };
}

/** The system assistant every turn falls back to (behaviour 1). */
export const isStandard = (assistant: Assistant) => assistant.user === null && assistant.institution === null && assistant.name === 'New Conversation';

export function AssistantPicker({ value, onChange }: { value: string; onChange(id: string): void }) {
  const profile = useProfile();
  const session = useSession();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const assistants = useQuery({ queryKey: ['assistants', profile.institution?._id], queryFn: () => unwrap(api.GET('/api/user/assistants')) });
  const favorites = useMemo(() => favoriteIds(profile.favoriteAssistants as unknown[]), [profile.favoriteAssistants]);
  // The standard assistant is the first option (no assistantId); the list names it too.
  const pickable = (assistants.data?.data ?? []).filter((assistant) => !isStandard(assistant));
  const ordered = orderAssistants(pickable, favorites);
  const isFavorite = value !== '' && favorites.has(value);

  const toggleFavorite = async () => {
    setError(null);
    try {
      const options = { params: { path: { id: value } } };
      await unwrap(isFavorite ? api.DELETE('/api/user/favoriteAssistants/{id}', options) : api.POST('/api/user/favoriteAssistants/{id}', options));
      await session.refreshProfile();
      await queryClient.invalidateQueries({ queryKey: ['assistants'] });
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <div className="assistant-picker">
      <label htmlFor="assistant-picker">Assistant</label>
      <select id="assistant-picker" value={value} onChange={(event) => onChange(event.target.value)}>
          <option value="">New Conversation (standard)</option>
          {ordered.favorites.length > 0 && (
            <optgroup label="Favorites">
              {ordered.favorites.map((assistant) => (
                <option key={assistant._id} value={assistant._id}>
                  {assistant.name}
                </option>
              ))}
            </optgroup>
          )}
          <optgroup label={ordered.favorites.length > 0 ? 'All assistants' : 'Assistants'}>
            {ordered.others.map((assistant) => (
              <option key={assistant._id} value={assistant._id}>
                {assistant.name}
              </option>
            ))}
          </optgroup>
      </select>
      {value && (
        <button type="button" className="icon-button" aria-pressed={isFavorite} onClick={() => void toggleFavorite()} aria-label={isFavorite ? 'Remove from favorites' : 'Add to favorites'}>
          {isFavorite ? '★' : '☆'}
        </button>
      )}
      <ErrorNotice error={assistants.error ?? error} />
    </div>
  );
}
