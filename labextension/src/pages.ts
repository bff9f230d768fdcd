/**
 * The task list's data: the status filter, the pages loaded so far ("Load more"), and
 * refreshing them when the WebSocket says something changed.
 *
 * Pages come from `GET tasks?status=&limit=&offset=`, newest update first; the page size is
 * the `limit` the server answers a request without one with. A refresh re-reads every row
 * the user asked to see (offset 0, `wanted` rows), so a task that changes status leaves or
 * enters a filtered list, and rows of later pages stay live. All fetches run one after
 * another through one queue: a reply never overwrites a newer one, and a reply for a filter
 * the user has since left is dropped.
 */
import { useCallback, useRef, useState } from 'react';

import { ITaskSummary, MAX_PAGE, Status, listTasks } from './api';
import { ILivePulse, absorbLive } from './common';

export type Filter = Status | 'all';

export interface ITaskPages {
  /** The filter `tasks` were fetched with. */
  filter: Filter;
  tasks: ITaskSummary[];
  hasMore: boolean;
  /** The first page of `filter` is on its way (the rows shown are not its rows yet). */
  loading: boolean;
  loadingMore: boolean;
  error: string | null;
}

export interface ITaskPagesControl {
  pages: ITaskPages;
  setFilter: (filter: Filter) => void;
  refresh: () => void;
  loadMore: () => void;
}

interface IShown {
  filter: Filter;
  tasks: ITaskSummary[];
  /** How many rows the user asked to see: a page, plus a page per "Load more". */
  wanted: number;
  /** The server's page size, known after the first reply. */
  pageSize: number | null;
}

const FALLBACK_PAGE = 50;

function statusOf(filter: Filter): Status | undefined {
  return filter === 'all' ? undefined : filter;
}

/** Rows in order, each id once (a row moved between two page requests comes back twice). */
function withoutRepeats(tasks: ITaskSummary[]): ITaskSummary[] {
  const seen = new Set<string>();
  const kept: ITaskSummary[] = [];
  for (const task of tasks) {
    if (!seen.has(task.id)) {
      seen.add(task.id);
      kept.push(task);
    }
  }
  return kept;
}

/** The first `wanted` rows of `filter` (in requests of at most MAX_PAGE rows). */
async function fetchTop(
  filter: Filter,
  wanted: number
): Promise<{ tasks: ITaskSummary[]; hasMore: boolean }> {
  const tasks: ITaskSummary[] = [];
  let hasMore = false;
  for (let offset = 0; offset < wanted; ) {
    const limit = Math.min(wanted - offset, MAX_PAGE);
    const page = await listTasks({ status: statusOf(filter), limit, offset });
    tasks.push(...page.tasks);
    hasMore = page.has_more;
    offset += limit;
    if (!page.has_more || page.tasks.length === 0) {
      break;
    }
  }
  return { tasks: withoutRepeats(tasks), hasMore };
}

export function useTaskPages(pulses: Map<string, ILivePulse>): ITaskPagesControl {
  const [pages, setPages] = useState<ITaskPages>({
    filter: 'all',
    tasks: [],
    hasMore: false,
    loading: true,
    loadingMore: false,
    error: null
  });
  const shown = useRef<IShown>({ filter: 'all', tasks: [], wanted: 0, pageSize: null });
  const queue = useRef<Promise<void>>(Promise.resolve());
  const refreshQueued = useRef(false);
  const moreQueued = useRef(0);

  const enqueue = useCallback((job: () => Promise<void>) => {
    queue.current = queue.current.then(job).catch(reason => {
      setPages(now => ({
        ...now,
        loading: false,
        loadingMore: false,
        error: (reason as Error).message
      }));
    });
  }, []);

  const show = useCallback(
    (filter: Filter, tasks: ITaskSummary[], hasMore: boolean) => {
      shown.current.tasks = tasks;
      absorbLive(pulses, tasks);
      const loadingMore = moreQueued.current > 0;
      setPages({ filter, tasks, hasMore, loading: false, loadingMore, error: null });
    },
    [pulses]
  );

  const refresh = useCallback(() => {
    if (refreshQueued.current) {
      return; // the refresh already waiting will see this change too
    }
    refreshQueued.current = true;
    enqueue(async () => {
      refreshQueued.current = false;
      const state = shown.current;
      const filter = state.filter;
      let found: { tasks: ITaskSummary[]; hasMore: boolean };
      if (state.pageSize === null) {
        const page = await listTasks({ status: statusOf(filter) });
        state.pageSize = page.limit > 0 ? page.limit : FALLBACK_PAGE;
        state.wanted = Math.max(state.wanted, state.pageSize);
        found = { tasks: page.tasks, hasMore: page.has_more };
      } else {
        found = await fetchTop(filter, Math.max(state.wanted, state.pageSize));
      }
      if (shown.current.filter === filter) {
        show(filter, found.tasks, found.hasMore);
      }
    });
  }, [enqueue, show]);

  const setFilter = useCallback(
    (filter: Filter) => {
      const state = shown.current;
      if (filter === state.filter) {
        return;
      }
      state.filter = filter;
      state.tasks = [];
      state.wanted = state.pageSize ?? 0;
      setPages({
        filter,
        tasks: [],
        hasMore: false,
        loading: true,
        loadingMore: false,
        error: null
      });
      refresh();
    },
    [refresh]
  );

  const loadMore = useCallback(() => {
    moreQueued.current += 1;
    setPages(now => ({ ...now, loadingMore: true }));
    enqueue(async () => {
      const state = shown.current;
      const filter = state.filter;
      const size = state.pageSize ?? FALLBACK_PAGE;
      const offset = state.tasks.length;
      let page;
      try {
        page = await listTasks({ status: statusOf(filter), limit: size, offset });
      } finally {
        moreQueued.current -= 1;
      }
      if (shown.current.filter === filter) {
        state.wanted = Math.max(state.wanted, offset) + size;
        show(filter, withoutRepeats([...state.tasks, ...page.tasks]), page.has_more);
      }
    });
  }, [enqueue, show]);

  return { pages, setFilter, refresh, loadMore };
}
