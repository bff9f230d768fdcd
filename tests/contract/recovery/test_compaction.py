"""Head+tail compaction and summary planning over OpenAI-format message lists."""

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import (
    SUMMARY_INSTRUCTIONS,
    apply_summary,
    compact_messages,
    compaction_marker,
    message_chars,
    plan_summary,
)

CONFIG = MercuryConfig()
Message = dict[str, Any]


def text_of(size: int, seed: str = "x") -> str:
    """A text whose every position is distinguishable, so head/tail cuts are checkable."""
    unit = f"<{seed}>" + "".join(f"{i:06d}," for i in range(size // 7 + 2))
    return unit[:size]


def system() -> Message:
    return {"role": "system", "content": text_of(30_000, "sys")}


def task() -> Message:
    return {"role": "user", "content": text_of(20_000, "task")}


def tool_group(n: int, result_chars: int, *, calls: int = 1) -> list[Message]:
    ids = [f"call_{n}_{k}" for k in range(calls)]
    assistant: Message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{n}.py"})},
            }
            for call_id in ids
        ],
    }
    results: list[Message] = [
        {"role": "tool", "tool_call_id": call_id, "content": text_of(result_chars, call_id)}
        for call_id in ids
    ]
    return [assistant, *results]


def conversation(groups: int, result_chars: int = 20_000) -> list[Message]:
    messages = [system(), task()]
    for n in range(groups):
        messages.extend(tool_group(n, result_chars))
        messages.append({"role": "assistant", "content": text_of(result_chars, f"say{n}")})
    return messages


def assert_pairing(messages: Sequence[Mapping[str, Any]]) -> None:
    """Every tool call is answered right after its assistant message, and every tool
    result follows the call it answers."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message.get("role") != "tool", f"orphan tool result at {index}"
        calls = message.get("tool_calls") or []
        expected = [call["id"] for call in calls]
        answered = [m.get("tool_call_id") for m in messages[index + 1 : index + 1 + len(calls)]]
        assert answered == expected, f"pairing broken after {index}"
        index += 1 + len(calls)


def test_exact_marker_text() -> None:
    assert compaction_marker(200_000) == (
        "[…compacted: 200000 chars → head+tail. Re-read specific sections if needed.]"
    )


def test_compacted_text_is_head_marker_tail() -> None:
    messages = conversation(10)
    original = messages[3]["content"]
    result = compact_messages(messages, CONFIG)
    assert result.messages[3]["content"] == (
        original[:4096] + "\n" + compaction_marker(20_000) + "\n" + original[-4096:]
    )


def test_newest_eight_are_untouched_and_older_long_texts_are_compacted() -> None:
    messages = conversation(10)
    result = compact_messages(messages, CONFIG)
    assert result.messages[-8:] == tuple(messages[-8:])
    older = result.messages[2:-8]
    long_older = [m for m in messages[2:-8] if isinstance(m["content"], str)]
    assert result.compacted == len(long_older) > 0
    for before, after in zip(messages[2:-8], older, strict=True):
        if isinstance(before["content"], str):
            assert "[…compacted: 20000 chars → head+tail." in after["content"]
            assert len(after["content"]) < len(before["content"])
        else:
            assert after == before


def test_system_and_task_are_never_compacted() -> None:
    messages = conversation(10)
    result = compact_messages(messages, CONFIG)
    assert result.messages[:2] == tuple(messages[:2])


def test_later_system_messages_are_never_compacted() -> None:
    messages = conversation(10)
    note = {"role": "system", "content": text_of(50_000, "note")}
    messages.insert(5, note)
    result = compact_messages(messages, CONFIG)
    assert result.messages[5] == note


def test_pairing_roles_and_ids_are_kept() -> None:
    messages = conversation(12)
    messages[10:10] = tool_group(99, 30_000, calls=3)
    result = compact_messages(messages, CONFIG)
    assert len(result.messages) == len(messages)
    assert [m["role"] for m in result.messages] == [m["role"] for m in messages]
    assert [m.get("tool_call_id") for m in result.messages] == [
        m.get("tool_call_id") for m in messages
    ]
    assert [m.get("tool_calls") for m in result.messages] == [m.get("tool_calls") for m in messages]
    assert_pairing(result.messages)


def test_compaction_is_idempotent() -> None:
    messages = conversation(10, result_chars=200_000)
    messages[4]["content"] = text_of(9_000)
    first = compact_messages(messages, CONFIG)
    second = compact_messages(first.messages, CONFIG)
    assert first.compacted > 0
    assert second.compacted == 0
    assert second.messages == first.messages
    assert second.chars_before == second.chars_after == first.chars_after


@pytest.mark.parametrize(
    ("size", "compacted"),
    [
        pytest.param(8_000, False, id="under-threshold"),
        pytest.param(8_192, False, id="exactly-threshold"),
        pytest.param(8_200, False, id="over-threshold-but-head-tail-would-not-be-shorter"),
        pytest.param(9_000, True, id="over-threshold-and-shorter"),
    ],
)
def test_threshold(size: int, compacted: bool) -> None:
    messages = [system(), task(), {"role": "assistant", "content": text_of(size)}]
    messages += [{"role": "user", "content": "ok"}] * 8
    result = compact_messages(messages, CONFIG)
    assert result.compacted == int(compacted)
    assert (result.messages[2] != messages[2]) is compacted


def test_short_conversation_is_untouched() -> None:
    messages = conversation(2)  # 2 + 6 messages: all within the newest 8 or protected
    result = compact_messages(messages, CONFIG)
    assert result.compacted == 0
    assert result.messages == tuple(messages)


def test_input_is_not_mutated_and_result_is_a_new_list() -> None:
    messages = conversation(10)
    snapshot = copy.deepcopy(messages)
    result = compact_messages(messages, CONFIG)
    assert messages == snapshot
    assert all(a is not b for a, b in zip(result.messages, messages, strict=True))


def test_char_counts_and_count() -> None:
    messages = conversation(10)
    result = compact_messages(messages, CONFIG)
    assert result.chars_before == sum(message_chars(m) for m in messages)
    assert result.chars_after == sum(message_chars(m) for m in result.messages)
    assert result.chars_after < result.chars_before


def test_text_parts_are_compacted_and_other_parts_kept() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    multi = {"role": "user", "content": [{"type": "text", "text": text_of(20_000)}, image]}
    messages = [system(), task(), multi, *[{"role": "user", "content": "ok"}] * 8]
    result = compact_messages(messages, CONFIG)
    parts = result.messages[2]["content"]
    assert compaction_marker(20_000) in parts[0]["text"]
    assert parts[1] == image


def test_config_sizes_and_keep_recent_override() -> None:
    config = MercuryConfig(
        compaction_min_chars=1_000, compaction_head_chars=100, compaction_tail_chars=200
    )
    messages = [system(), task(), *[{"role": "assistant", "content": text_of(5_000)}] * 6]
    result = compact_messages(messages, config, keep_recent=2)
    assert result.compacted == 4
    content = result.messages[2]["content"]
    original = messages[2]["content"]
    assert content == original[:100] + "\n" + compaction_marker(5_000) + "\n" + original[-200:]
    assert result.messages[-2:] == tuple(messages[-2:])


# --- summary -----------------------------------------------------------------------------
def test_plan_summarizes_between_task_and_recent_messages() -> None:
    messages = conversation(10)
    plan = plan_summary(messages, CONFIG)
    assert plan is not None
    assert plan.start == 2
    assert len(messages) - plan.end >= 8
    assert messages[plan.end]["role"] != "tool"


def test_plan_moves_the_boundary_so_tool_results_keep_their_call() -> None:
    messages = [system(), task()]
    for n in range(5):
        messages.extend(tool_group(n, 100, calls=3))  # groups of 4: call + 3 results
    messages.append({"role": "user", "content": "go on"})
    assert messages[len(messages) - 8]["role"] == "tool"
    plan = plan_summary(messages, CONFIG)
    assert plan is not None
    assert messages[plan.end]["role"] == "assistant"
    assert len(messages) - plan.end > 8


def test_summary_request_keeps_task_plan_files_and_errors() -> None:
    messages = conversation(10)
    plan = plan_summary(messages, CONFIG)
    assert plan is not None
    system_prompt, user_prompt = plan.request
    assert system_prompt == {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    for heading in ("Task:", "Plan:", "Files touched:", "Last errors:"):
        assert heading in SUMMARY_INSTRUCTIONS
    assert messages[1]["content"][:1000] in user_prompt["content"]
    assert f"({plan.replaced} messages, oldest first)" in user_prompt["content"]
    assert "→ read_file(" in user_prompt["content"]


def test_summary_transcript_is_capped() -> None:
    messages = conversation(40)
    plan = plan_summary(messages, CONFIG, max_transcript_chars=10_000)
    assert plan is not None
    prompt = plan.request[1]["content"]
    assert "earlier messages left out" in prompt
    assert len(prompt) < 10_000 + 2 * 4_000


def test_apply_summary_keeps_task_tail_and_pairing() -> None:
    messages = conversation(10)
    messages[-6:-6] = tool_group(77, 100, calls=2)  # the newest 8 start at its first result
    plan = plan_summary(messages, CONFIG)
    assert plan is not None
    assert messages[plan.end]["tool_calls"][0]["id"] == "call_77_0"
    result = apply_summary(messages, plan, "  Task: build it. Plan: step 2 of 3.  ")
    assert result[:2] == tuple(messages[:2])
    assert result[2]["role"] == "user"
    assert result[2]["content"].startswith("[SYSTEM: CONTEXT SUMMARY")
    assert f"from {plan.replaced} earlier messages" in result[2]["content"]
    assert result[2]["content"].endswith("\nTask: build it. Plan: step 2 of 3.")
    assert result[3:] == tuple(messages[plan.end :])
    assert_pairing(result)


def test_apply_summary_refuses_blank_summary_and_stale_plan() -> None:
    messages = conversation(10)
    plan = plan_summary(messages, CONFIG)
    assert plan is not None
    with pytest.raises(ValueError, match="empty summary"):
        apply_summary(messages, plan, "   ")
    with pytest.raises(ValueError, match="does not fit"):
        apply_summary(messages[: plan.end - 1], plan, "summary")
    shifted = [*messages[:3], *messages[4:]]
    shifted.insert(plan.end, {"role": "tool", "tool_call_id": "x", "content": "r"})
    with pytest.raises(ValueError, match="separate tool results"):
        apply_summary(shifted, plan, "summary")


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([], id="empty"),
        pytest.param(conversation(3), id="everything-recent"),
        pytest.param(
            [system(), task(), {"role": "assistant", "content": "a"}, *[{"role": "user"}] * 8],
            id="one-older",
        ),
    ],
)
def test_nothing_to_summarize(messages: list[Message]) -> None:
    assert plan_summary(messages, CONFIG) is None
