"""Escaping cluster text for the formats exports write.

Object names, messages and annotations come from the audited cluster, so they
can hold anything: spreadsheet formulas, HTML, Markdown, pipes and newlines.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# A spreadsheet evaluates a cell starting with one of these as a formula (or,
# for tab and carriage return, may shift it into one).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")

# Characters Markdown (CommonMark and GitHub's tables) gives meaning inside a
# line: emphasis, code, links, images, raw HTML, entities, strikethrough and
# table cells. Backslash-escaping them makes each one literal.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&!])")
# Characters that start a block (heading, quote, list, setext underline) when
# they open a line; only the first one needs escaping.
_MD_BLOCK_MARK = re.compile(r"^[#>+=-]")
_MD_ORDERED_ITEM = re.compile(r"^(\d+)([.)])")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]")


def csv_cell(value: object) -> str:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula.

    A leading apostrophe is how spreadsheets mark a cell as literal text; it is
    added only where needed, so ordinary values stay unchanged.
    """
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def one_line(text: str) -> str:
    """Line breaks as spaces: a table cell or a heading cannot hold a new line."""
    return _LINE_BREAKS.sub(" ", text)


def md_text(value: object) -> str:
    """Cluster text as literal Markdown on one line (a table cell, a heading, a sentence)."""
    text = _MD_INLINE.sub(r"\\\1", one_line("" if value is None else str(value)))
    text = _MD_BLOCK_MARK.sub(lambda m: "\\" + m.group(0), text)
    return _MD_ORDERED_ITEM.sub(r"\1\\\2", text)


def md_code(value: object) -> str:
    """Short identifiers (check ids) as inline code; backticks cannot occur in them but are dropped if they do."""
    return "`" + one_line(str(value)).replace("`", "") + "`"


def md_url(url: str) -> str:
    """A URL safe inside ``[text](url)``: spaces, brackets, parentheses and angle brackets percent-encoded."""
    return quote(one_line(url).strip(), safe=":/?#@!$&'*+,;=%~-._")
