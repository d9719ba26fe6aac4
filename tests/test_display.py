"""What a person reads is what is asked: one display function for every surface."""

from __future__ import annotations

import html
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from bot.display import display, has_hidden, visible

BIDI_CONTROLS = [
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
]
ZERO_WIDTH = ["\u200b", "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\u3164", "\U000e0100"]


@pytest.mark.parametrize("control", BIDI_CONTROLS + ZERO_WIDTH)
def test_every_bidi_and_invisible_control_is_shown_as_its_code_point(control: str) -> None:
    """Each control reads as ⟨U+XXXX⟩ in the text, so the reader sees it was there."""
    shown = visible(f"deploy prod{control}gnits")
    assert control not in shown
    assert f"⟨U+{ord(control):04X}⟩" in shown
    assert has_hidden(f"a{control}b")


@pytest.mark.parametrize(
    "text",
    [
        "مرحبا بالعالم",  # Arabic
        "שלום עולם",  # Hebrew
        "می\u200cخواهم",  # noqa: RUF001 - Persian, with the zero-width non-joiner it needs
        "👨\u200d👩\u200d👧",  # an emoji family joined by ZWJ
        "line one\n\tline two",
        "Déploiement en production ✅",
    ],
)
def test_ordinary_text_of_any_script_is_left_as_it_is(text: str) -> None:
    """Right-to-left letters, joiners doing their job, newlines and tabs stay."""
    assert visible(text) == text
    assert not has_hidden(text)


def test_a_joiner_with_nothing_to_join_is_shown() -> None:
    """A ZWJ at an edge or beside a space joins nothing: it can only hide."""
    assert visible("\u200dstaging") == "⟨U+200D⟩staging"
    assert visible("prod \u200c") == "prod ⟨U+200C⟩"


def test_slack_markup_cannot_mention_or_link() -> None:
    """Slack's three control characters are escaped, after the controls are shown."""
    assert display("<!channel> <https://evil.example|ok> & \u202e", markup="slack") == (
        "&lt;!channel&gt; &lt;https://evil.example|ok&gt; &amp; ⟨U+202E⟩"
    )


def test_html_markup_cannot_make_a_tag() -> None:
    """An HTML page shows the words, not elements."""
    assert display('<img src=x onerror="alert(1)">', markup="html") == (
        "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    )


def test_plain_markup_only_makes_controls_visible() -> None:
    """Where nothing is interpreted, the text is kept but for its hidden characters."""
    assert display("[a](b) <c> *d*\u2066", markup="plain") == "[a](b) <c> *d*⟨U+2066⟩"


def test_prose_keeps_its_look_on_teams() -> None:
    """Only what could start markup is escaped: versions and parentheses stay as written."""
    assert display("v1.2 (beta) a-b, 3+4 = 7", markup="teams") == "v1.2 (beta) a-b, 3+4 = 7"


_MARKDOWN = MarkdownIt("commonmark").enable("strikethrough")
_MARKUP_TAGS = re.compile(r"<(?!/?p>|br />)[a-z]")  # a line break is the newline typed


_PIECES = [
    "a",
    "b",
    " ",
    "    ",
    "\n",
    "\t",
    *"#*_[]()-+1.>`~<&!|=\\:/;",
    "\u202e",
    "&#42;",
    "http://x",
]


@given(st.lists(st.sampled_from(_PIECES)).map("".join))
def test_teams_text_renders_as_the_same_words_in_a_markdown_renderer(text: str) -> None:
    """Whatever an agent writes, a CommonMark renderer draws its words and no element:
    no link, emphasis, heading, list, quote or code."""
    rendered = _MARKDOWN.render(display(text, markup="teams"))
    assert not _MARKUP_TAGS.search(rendered), rendered
    words = html.unescape(re.sub(r"</?p>|<br />", "", rendered))
    assert words.split() == visible(text).split()


@given(st.text())
def test_no_format_character_survives_but_a_joiner_doing_its_job(text: str) -> None:
    """After display, a format or control character remains only as a joiner between two
    drawn characters (or a newline or tab)."""
    shown = visible(text)
    for index, char in enumerate(shown):
        if char in "\n\t" or unicodedata.category(char) not in {"Cf", "Cc"}:
            continue
        assert char in "\u200c\u200d", repr(shown)
        assert 0 < index < len(shown) - 1
