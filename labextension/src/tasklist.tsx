/**
 * The task list's view: the status filter, one row per task (chip, text, workspace, age,
 * the pulse line of a running task), the empty-list message and the "Load more" button.
 * The data and its paging live in pages.ts. Every value is a React text node, never HTML.
 */
import React from 'react';

import { ITaskSummary, STATUSES } from './api';
import { ApprovalBadge } from './approval';
import { ILivePulse, StatusChip, age, pulseLine, shortPath } from './common';
import { Filter, ITaskPages } from './pages';

function TaskRow(props: {
  task: ITaskSummary;
  pulse: ILivePulse | undefined;
  now: number;
  selected: boolean;
  onSelect: (id: string) => void;
}): JSX.Element {
  const { task } = props;
  return (
    <li
      className={'jp-mercury-row' + (props.selected ? ' jp-mod-selected' : '')}
      data-task-id={task.id}
      onClick={() => props.onSelect(task.id)}
    >
      <div className="jp-mercury-row-head">
        <StatusChip status={task.status} />
        <ApprovalBadge task={task} />
        <span className="jp-mercury-age">{age(props.now - task.updated_at)}</span>
      </div>
      <div className="jp-mercury-row-text" title={task.task}>
        {task.task}
      </div>
      <div className="jp-mercury-workspace" title={task.workspace}>
        {shortPath(task.workspace)}
      </div>
      {task.parent && (
        <div className="jp-mercury-parent">↳ sub-agent of {task.parent}</div>
      )}
      {task.status === 'running' && (
        <div className="jp-mercury-pulse">{pulseLine(props.pulse, props.now)}</div>
      )}
    </li>
  );
}

function StatusFilter(props: {
  filter: Filter;
  shown: string;
  onFilter: (filter: Filter) => void;
}): JSX.Element {
  return (
    <div className="jp-mercury-filter-row">
      <label className="jp-mercury-filter-label">
        Show{' '}
        <select
          className="jp-mercury-filter"
          value={props.filter}
          onChange={event => props.onFilter(event.target.value as Filter)}
        >
          <option value="all">all tasks</option>
          {STATUSES.map(status => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <span className="jp-mercury-count">{props.shown}</span>
    </div>
  );
}

function emptyText(filter: Filter): string {
  return filter === 'all' ? 'No tasks yet.' : `No ${filter} tasks.`;
}

export function TaskList(props: {
  pages: ITaskPages;
  pulses: Map<string, ILivePulse>;
  now: number;
  selected: string | null;
  onSelect: (id: string) => void;
  onFilter: (filter: Filter) => void;
  onLoadMore: () => void;
}): JSX.Element {
  const { pages } = props;
  const count = pages.tasks.length;
  const shown = pages.loading ? 'loading…' : `${count} shown`;
  return (
    <div className="jp-mercury-tasks">
      <StatusFilter filter={pages.filter} shown={shown} onFilter={props.onFilter} />
      <ul
        className="jp-mercury-list"
        data-filter={pages.filter}
        aria-busy={pages.loading || pages.loadingMore}
      >
        {count === 0 && !pages.loading && !pages.error && (
          <li className="jp-mercury-muted jp-mercury-empty">{emptyText(pages.filter)}</li>
        )}
        {pages.tasks.map(task => (
          <TaskRow
            key={task.id}
            task={task}
            pulse={props.pulses.get(task.id)}
            now={props.now}
            selected={task.id === props.selected}
            onSelect={props.onSelect}
          />
        ))}
      </ul>
      {pages.hasMore && !pages.loading && (
        <button
          className="jp-mercury-more jp-Button jp-mod-styled"
          disabled={pages.loadingMore}
          onClick={props.onLoadMore}
        >
          {pages.loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
    </div>
  );
}
