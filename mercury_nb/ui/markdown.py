"""A model's answer as safe HTML: Markdown rendered with raw HTML off, then an allow-list sanitizer.

Two independent layers, so a mistake in one is caught by the other:

1. ``markdown-it-py`` (CommonMark, tables, strikethrough) renders with ``html=False``: raw
   HTML in the answer (``<script>``, ``<img onerror=…>``) comes out as escaped text, and
   its link validation refuses ``javascript:``/``vbscript:``/``data:`` links.
2. ``nh3`` (the Ammonia sanitizer) keeps only the tags and attributes in :data:`TAGS` /
   :data:`ATTRIBUTES`: no ``style``, no event handlers, no images (an answer cannot make
   the browser fetch anything), links only to ``http``/``https``/``mailto`` and opened
   with ``rel="noopener noreferrer nofollow"``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

TAGS = frozenset({
    "a", "p", "br", "hr", "strong", "em", "b", "i", "s", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
})
"""The only HTML tags an answer may produce."""

ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}
"""The only attributes kept, per tag (``rel`` on links is set by the sanitizer)."""

URL_SCHEMES = frozenset({"http", "https", "mailto"})


@cache
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}
                      ).enable(["table", "strikethrough"])


def sanitize_html(html: str) -> str:
    """``html`` cut down to the allow-list (tags, attributes, URL schemes)."""
    import nh3

    return nh3.clean(
        html,
        tags=set(TAGS),
        attributes=ATTRIBUTES,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def markdown_html(text: str) -> str:
    """``text`` (Markdown, possibly hostile) as sanitized HTML."""
    return sanitize_html(_renderer().render(text))
