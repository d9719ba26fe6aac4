"""What a person reads: the one function every surface shows outside text through.

Text from an agent, a model or a request is shown, never obeyed. Two things
can make what an approver reads differ from what is asked:

- invisible format characters. One U+202E (right-to-left override) makes
  the rest of a line read backwards, so ``deploy to prod‮gnits`` can read as
  another target (the Trojan Source pattern); zero-width spaces, tag
  characters and variation selectors can hide text altogether. Each one is
  replaced by its visible code point, ``⟨U+202E⟩``, so the reader sees it was
  there. Letters of right-to-left scripts are left alone: Arabic and Hebrew
  read as they should, since the renderer's own bidi algorithm orders them.
- the surface's markup. Slack's ``<!channel>`` or ``<https://x|text>``, an
  Adaptive Card's ``[Click](https://evil.example)`` or ``**`` and an HTML
  page's tags would make a mention, a link or a heading out of plain words.
  Each surface's markup is escaped so the words show as typed.

``display(text, markup=...)`` does both, in that order; renderers call it on
every value that did not come from this code base, and clip after it so a
limit never cuts a marker in half.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Literal, assert_never

# Where a text is shown: Slack mrkdwn, an Adaptive Card's markdown (TextBlock,
# FactSet), an HTML document, or a place that interprets nothing (a console
# page's textContent, a plain_text object, an input's label, a terminal).
Markup = Literal["slack", "teams", "html", "plain"]

# Invisible by design but not format characters (category Lo, Zl, Zp, Mn):
# the Hangul fillers draw nothing; line and paragraph separators break lines
# in some renderers and not others; U+034F, the combining grapheme joiner,
# and the supplementary variation selectors carry hidden data.
_INVISIBLE_OTHERS = frozenset(
    {"\u115f", "\u1160", "\u3164", "\uffa0", "\u034f", "\u2028", "\u2029"}
)
_KEPT_CONTROLS = frozenset({"\n", "\t"})
_JOINERS = frozenset({"\u200c", "\u200d"})

# Adaptive Cards markdown (as Teams and markdown-it read it): emphasis, code,
# links and raw HTML anywhere in a line; headings, lists and quotes at its
# start, and an indented line is code. CommonMark reads a backslash before ASCII punctuation as that
# character itself; only what could start markup is escaped, so ordinary
# prose ("v1.2 (beta)") keeps its look where markdown is not processed.
_TEAMS_INLINE = re.compile(r"([\\`*_\[\]~<>&])")
_TEAMS_LINE_START = re.compile(r"^([ \t]*)([#>+\-=]|\d+[.)]|)", re.MULTILINE)


def display(text: object, *, markup: Markup) -> str:
    """``text`` as a person should see it on a surface reading ``markup``."""
    shown = visible(str(text))
    if markup == "plain":
        return shown
    if markup == "slack":
        return shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if markup == "teams":
        escaped = _TEAMS_INLINE.sub(r"\\\1", shown)
        return _TEAMS_LINE_START.sub(_escape_line_start, escaped)
    if markup == "html":
        return html.escape(shown, quote=True)
    assert_never(markup)


def visible(text: str) -> str:
    """``text`` with every invisible or direction-changing character shown as ``⟨U+XXXX⟩``."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing can hide in printable ASCII
    out: list[str] = []
    for index, char in enumerate(text):
        if _hidden(char) and not _joining(text, index):
            out.append(f"⟨U+{ord(char):04X}⟩")
        else:
            out.append(char)
    return "".join(out)


def _escape_line_start(match: re.Match[str]) -> str:
    # An indent would make a code block: no-break spaces keep the look and mean nothing.
    indent = match.group(1).replace("\t", "    ").replace(" ", "\u00a0")
    marker = match.group(2)
    if not marker:
        return indent
    if marker[0].isdigit():  # "1." or "1)": escape the dot, the number stays a number
        return f"{indent}{marker[:-1]}\\{marker[-1]}"
    return f"{indent}\\{marker}"


def has_hidden(text: str) -> bool:
    """Whether ``visible`` would change ``text``: tests and audits ask it."""
    return visible(text) != text


def _hidden(char: str) -> bool:
    if char in _KEPT_CONTROLS:
        return False
    if char in _INVISIBLE_OTHERS:
        return True
    if "\U000e0100" <= char <= "\U000e01ef":
        return True
    # Cf: format characters (bidi embeddings, overrides, isolates and marks,
    # zero-width spaces, word joiners, tags); Cc: control characters.
    return unicodedata.category(char) in {"Cf", "Cc"}


def _joining(text: str, index: int) -> bool:
    """A zero-width joiner or non-joiner between two visible characters is doing its job
    (an emoji sequence, Persian or Indic spelling), so it stays; anywhere else it hides."""
    if text[index] not in _JOINERS or index == 0 or index == len(text) - 1:
        return False
    before, after = text[index - 1], text[index + 1]
    return _drawn(before) and _drawn(after)


def _drawn(char: str) -> bool:
    return not char.isspace() and not _hidden(char) and char not in _JOINERS
