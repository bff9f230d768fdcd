/**
 * The one table of an event's words in the panel: each kind of the log as a plain line.
 * The twin of mercury_nb/ledger/event_words.py (a test runs both on the same events): no
 * event kind, no verdict or decision names, no tool name followed by its summary again.
 * `null`: not a line of the log for people (the streamed text, which the live text shows;
 * a tool that finished fine, which its start already said).
 */
import { oneLine } from './untrusted';

/** Every kind an event row can have (mercury_nb/runs/events.py EVENT_KINDS). */
export type EventKind =
  | 'task-started'
  | 'step-started'
  | 'text-delta'
  | 'tool-started'
  | 'tool-finished'
  | 'tool-progress'
  | 'pulse'
  | 'memory-pressure-pause'
  | 'permission-asked'
  | 'permission-answered'
  | 'step-ended'
  | 'turn-ended'
  | 'task-finished'
  | 'notice'
  | 'provider-switch'
  | 'guard-round'
  | 'continuation'
  | 'verification'
  | 'compaction'
  | 'stall'
  | 'subagent'
  | 'resume'
  | 'stop-requested'
  | 'recovery';

type Data = { [key: string]: unknown };

const TOOL_VERBS: { [tool: string]: string } = {
  run_command: 'runs',
  read_file: 'reads',
  write_file: 'writes',
  create_file: 'creates',
  edit_file: 'edits',
  delete_file: 'deletes',
  list_dir: 'lists',
  read_notebook: 'reads the notebook',
  edit_notebook_cell: 'edits a cell of',
  insert_notebook_cell: 'adds a cell to',
  run_cells: 'runs the cells of',
  delegate_task: 'hands a sub-task to a sub-agent:',
  ask_user: 'asks you:'
};

const VERDICT_WORDS: { [verdict: string]: string } = {
  'text-stop': 'the model replied',
  'steps-exhausted': 'the step budget ran out',
  interrupted: 'the reply was cut off',
  truncated: 'the reply hit its length limit',
  aborted: 'stopped'
};

const DECISION_WORDS: { [decision: string]: string } = {
  finish: 'finishing',
  'next-turn': 'going on',
  'retry-step': 'asking again',
  'guard-round': 'one more round to check the work'
};

function text(data: Data, key: string): string {
  const value = data[key];
  return typeof value === 'string' ? value : '';
}

/** `runs pytest -q`, `reads a.txt`: what a tool call does and on what, once. */
export function toolWords(data: Data): string {
  const name = text(data, 'name');
  const summary = text(data, 'summary');
  let target = text(data, 'command');
  if (!target) {
    target = (summary.startsWith(`${name}:`) ? summary.slice(name.length + 1) : summary).trim();
  }
  if (target === name) {
    target = '';
  }
  const verb = TOOL_VERBS[name] ?? name;
  return `${verb} ${target}`.trim();
}

function turn(data: Data): string {
  const verdict = text(data, 'verdict');
  const decision = text(data, 'decision');
  const parts = [VERDICT_WORDS[verdict] ?? verdict, DECISION_WORDS[decision] ?? decision];
  return parts.filter(part => part).join(', ') || 'a turn ended';
}

function pause(data: Data): string {
  const tokens =
    typeof data.prompt_tokens === 'number'
      ? ` · ${data.prompt_tokens}/${String(data.budget_tokens)} tokens`
      : '';
  const memory =
    typeof data.rss_mb === 'number'
      ? ` · ${Math.round(data.rss_mb)}/${String(data.limit_mb)} MB`
      : '';
  return `paused on ${text(data, 'reason')}${tokens}${memory}: ${text(data, 'why')}`;
}

function answered(data: Data): string {
  const what = text(data, 'what');
  const answer = text(data, 'answer');
  if (answer === 'always-allow') {
    return `allowed from now on (${text(data, 'rule')}): ${what}`;
  }
  if (answer === 'allow-once') {
    return `allowed once: ${what}`;
  }
  return `denied: ${what} (${text(data, 'why')})`;
}

function chain(data: Data): string {
  const models = data.models;
  const names = Array.isArray(models) ? models.map(String).join(' → ') : '';
  return names || text(data, 'model') || 'the model';
}

/** The words of every kind: a typed table, so a kind added to EventKind must get its line. */
const WORDS: { [kind in EventKind]: (data: Data) => string | null } = {
  'task-started': data => `started with ${chain(data)}`,
  resume: data => `continued with ${chain(data)}`,
  'step-started': data => `step ${data.step === undefined ? '?' : String(data.step)}`,
  'text-delta': () => null,
  'step-ended': () => null,
  'tool-started': toolWords,
  'tool-finished': data => (data.ok === false ? `failed: ${toolWords(data)}` : null),
  'tool-progress': () => null,
  pulse: data => text(data, 'text') || 'waiting for the model',
  'memory-pressure-pause': pause,
  'permission-asked': data => `asks permission to ${text(data, 'what')}`,
  'permission-answered': answered,
  'turn-ended': turn,
  'task-finished': data => `ended: ${text(data, 'status') || 'finished'}`,
  'stop-requested': () => 'Stop requested',
  recovery: data => text(data, 'text') || 'its process had ended: paused',
  notice: data => text(data, 'text') || null,
  'provider-switch': data => text(data, 'text') || null,
  'guard-round': data => text(data, 'text') || null,
  continuation: data => text(data, 'text') || null,
  verification: data => text(data, 'text') || null,
  compaction: data => text(data, 'text') || null,
  stall: data => text(data, 'text') || null,
  subagent: data => text(data, 'text') || null
};

/** The line for one event (a kind this panel does not know reads as a notice), on one line. */
export function eventWords(kind: string, data: Data): string | null {
  const words = Object.prototype.hasOwnProperty.call(WORDS, kind)
    ? WORDS[kind as EventKind]
    : WORDS.notice;
  const line = words(data || {});
  return line === null ? null : oneLine(line);
}
