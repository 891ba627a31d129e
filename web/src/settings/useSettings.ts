// The person's preferences (GET/PUT /api/user/setting), shared by the settings and memory screens.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Settings } from '../api/types';
import { useSession } from '../session';

export function useSettings() {
  const queryClient = useQueryClient();
  const session = useSession();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/user/setting')) });
  const save = useMutation({
    mutationFn: (change: Partial<Settings>) => unwrap(api.PUT('/api/user/setting', { body: change })),
    onSuccess: async (answer) => {
      queryClient.setQueryData(['settings'], answer);
      // dark_mode and the memory switch live on the profile too.
      await session.refreshProfile();
    },
  });
  return { settings, save };
}
