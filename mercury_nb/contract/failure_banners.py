"""The words of the failures no "continue" cures: a model without tools, a window too small."""

from __future__ import annotations

from mercury_nb.contract.endings import NoToolSupport, WindowTooSmall
from mercury_nb.contract.untrusted import one_line

FAILED = "I couldn't finish this one — {reason}."
NO_TOOL_SUPPORT = (
    "I can't do this task with {model}: it does not take tools, so it can neither write a "
    "file nor run a command."
)
NO_TOOLS_REPORTED = (
    "How I know: its server reports that the chat template has no tool support "
    "(chat_template_caps in /props)."
)
NO_TOOLS_OBSERVED = (
    'How I know: it answered {ignored} forced tool calls (tool_choice "required") with prose '
    "and no call."
)
NO_TOOLS_FIX = (
    "To fix it: choose a model with tool support; or start llama-server with --jinja and a "
    "tool-capable --chat-template-file; or use a provider that supports tools. Resuming this "
    "task cannot help: run it again once the model takes tools."
)
NO_RESUME = "Continuing cannot help with the same window. To fix it:"
ALSO_SMALL_WINDOW = ("The window is too small as well: {reason}; the tool-capable setup "
                     "needs a larger one (for llama-server: `-c {window}`).")
LARGER_WINDOW_FIX = "use a model or server with a larger window (for llama-server: `-c {window}`)"
WINDOW_VARIABLE_NOTE = (
    "Set MERCURY_CONTEXT_WINDOW only if the server really has more than {window:,} tokens."
)
COMPACT_FIX = "use the compact tool set: MERCURY_TOOL_SET=compact (about {tokens:,} tokens)"
SHORTER_TASK_FIX = "shorten the task (about {tokens:,} tokens)"


def about(tokens: int) -> str:
    """A measured size as said "about": to the hundred from 1,000 up, else to the ten."""
    step = 100 if tokens >= 1000 else 10
    return f"{max(step, round(tokens / step) * step):,}"


def window_reason(ending: WindowTooSmall) -> str:
    """What does not fit, as one clause: the tool definitions, or the task beside them."""
    size = f"this model's {ending.window:,}-token window"
    if ending.task_tokens:
        needed = ending.system_tokens + ending.tools_tokens + ending.task_tokens
        return (f"{size} cannot hold the task with the tool definitions (about "
                f"{about(needed)} tokens for a budget of {ending.budget:,})")
    form = ", even in their compact form" if ending.compact else ""
    tools = about(ending.tools_tokens)
    return f"{size} cannot hold the tool definitions (about {tools} tokens){form}"


def window_lines(ending: WindowTooSmall) -> list[str]:
    """The small-window failure: the clause, the arithmetic, and the fixes (no resume)."""
    fixed = ending.system_tokens + ending.tools_tokens
    carried = "the system prompt and the tool definitions"
    if ending.task_tokens:
        carried += f" (about {fixed:,} tokens) and the task"
        fixed += ending.task_tokens
    fixes = [LARGER_WINDOW_FIX.format(window=ending.larger_window)]
    if ending.compact_tokens is not None:
        fixes.append(COMPACT_FIX.format(tokens=ending.compact_tokens))
    if ending.task_tokens:
        fixes.append(SHORTER_TASK_FIX.format(tokens=ending.task_tokens))
    return [
        FAILED.format(reason=window_reason(ending)),
        f"Every request carries {carried}, about {fixed:,} tokens before any conversation; the "
        f"window leaves {ending.budget:,} for them after {ending.reply_tokens:,} for the reply.",
        NO_RESUME,
        *(f"- {fix};" for fix in fixes[:-1]),
        f"- {'or ' if len(fixes) > 1 else ''}{fixes[-1]}.",
        WINDOW_VARIABLE_NOTE.format(window=ending.window),
    ]


def no_tools_blocker(ending: NoToolSupport) -> str:
    """The blocker in one line: which model takes no tools, and how that is known."""
    how = ("its server reports no tool support" if ending.evidence == "reported"
           else f"it answered {ending.ignored} forced tool calls with prose")
    if ending.window is not None:
        how += f"; and {window_reason(ending.window)}"
    return f"{one_line(ending.model)} does not take tools ({how})"


def no_tools_line(ending: NoToolSupport) -> str:
    """How the missing tool support is known: the server said so, or the model showed it."""
    reported = ending.evidence == "reported"
    return NO_TOOLS_REPORTED if reported else NO_TOOLS_OBSERVED.format(ignored=ending.ignored)
