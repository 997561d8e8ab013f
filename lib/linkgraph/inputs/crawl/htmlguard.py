"""The cost of parsing an HTML page, estimated in one linear pass before the parser runs.

Lexbor's tree builder does work proportional to the depth of the stack of open elements for every
token (scope checks), so parse time grows with elements x depth: 20k nested ``<div>`` take ~2 s,
100k over a minute.  :func:`html_cost_problem` tokenizes the page as an HTML5 tokenizer does and
keeps a model of the stack of open elements, so that its depth is never below the parser's:

* tokenizing: tag names run to whitespace, ``/`` or ``>``; attribute values in quotes may hold
  ``>`` and ``<``; comments end at ``-->`` or ``--!>``, and ``<!-->`` / ``<!--->`` are closed
  (empty) comments; ``<!…>``, ``<?…>`` and ``</`` + a non-letter are bogus comments ending at the
  next ``>``; the text of ``script`` (with its ``<!--``/``<script`` escape states), ``style``,
  ``xmp``, ``iframe``, ``noembed``, ``noframes`` (raw text), ``textarea`` and ``title`` (RCDATA)
  ends only at its own end tag (``</name`` then whitespace, ``/`` or ``>``); ``plaintext`` runs to
  the end.  ``noscript`` is markup (the parser runs with scripting off).  Inside ``svg``/``math``
  none of these is raw text, ``/>`` closes an element, and an HTML block start tag ends the
  foreign element;
* tree model: an end tag closes only an open element of its name that the HTML5 rules let it
  reach (scope boundaries such as ``table``, ``td``, ``button``, ``select``, ``object``; for
  unlisted names any special element; for ``li`` also ``ul``/``ol``); a stray end tag changes
  nothing.  Implied end tags (``p`` before a block, ``li``, ``dd``/``dt``, ``option``, headings,
  table rows and cells) close only what the parser would close; a formatting element closed
  implicitly stays active and is counted again when the parser would reconstruct it.  Where the
  model cannot follow the parser exactly it keeps more elements open, never fewer.

The budget (:class:`ParseBudget`) bounds the depth, the work (the depth summed over all element
insertions), the number of elements, the size of the page and the wall-clock time of the scan.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from linkgraph.errors import PayloadError
from linkgraph.inputs.crawl.payload import OVERSIZED_PAGE

MAX_HTML_DEPTH = 1024               # Blink stops nesting at 512: deeper pages are not real documents
MAX_HTML_WORK = 200_000_000         # depth summed over element insertions (~3 s of parsing)
MAX_HTML_ELEMENTS = 1_000_000
MAX_HTML_BYTES = 5_000_000
MAX_PARSE_SECONDS = 30.0
_CLOCK_EVERY = 4096                 # tokens between two looks at the clock


@dataclass(frozen=True)
class ParseBudget:
    """What one page's parse may cost: nesting depth, work (depth summed over insertions), elements,
    bytes of the decoded page (UTF-8) and seconds (guard, parse and DOM walk together)."""

    max_depth: int = MAX_HTML_DEPTH
    max_work: int = MAX_HTML_WORK
    max_elements: int = MAX_HTML_ELEMENTS
    max_bytes: int = MAX_HTML_BYTES
    max_seconds: float = MAX_PARSE_SECONDS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HEADINGS = _words("h1 h2 h3 h4 h5 h6")
VOID = _words("area base br col embed hr img input link meta source track wbr param keygen basefont bgsound "
              "frame image")
_SINGLETONS = _words("html head body frameset")
_RAW_TEXT = _words("style xmp iframe noembed noframes textarea title")
_SCOPE = _words("applet caption html table td th marquee object template select")
_INTEGRATION = {"svg": _words("foreignobject desc title"), "math": _words("mi mo mn ms mtext annotation-xml")}
_SPECIAL = _HEADINGS | VOID | _words(
    "address applet article aside blockquote body button caption center colgroup dd details dir div dl dt "
    "fieldset figcaption figure footer form frameset head header hgroup html iframe li listing main marquee "
    "menu nav noembed noframes noscript object ol p plaintext pre script search section select style summary "
    "table tbody td template textarea tfoot th thead title tr ul xmp")
_HARD_SPECIAL = _SPECIAL - {"address", "div", "p"}
_CLOSES_P = _HEADINGS | _words(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer "
    "header hgroup main menu nav ol p search section summary ul pre listing form li dd dt plaintext hr xmp")
# (a table start tag closes a p only in no-quirks mode: the model keeps it open)
_NO_RECONSTRUCT = (_CLOSES_P - {"xmp"}) | _words(
    "table param source track hr textarea iframe noembed rb rtc rp rt base basefont bgsound link meta noframes "
    "script style template title")
_FORMATTING = _words("a b big code em font i nobr s small strike strong tt u")
_MARKERS = _words("applet object marquee template td th caption")
_TABLE_PARTS = _words("table tbody thead tfoot tr td th caption colgroup col")
_SECTIONS = _words("tbody thead tfoot")
_BREAKOUT = _HEADINGS | _words(
    "b big blockquote body br center code dd div dl dt em embed head hr i img li listing menu meta nobr ol p "
    "pre ruby s small span strong strike sub sup table tt u ul var")

_MARKUP = re.compile(r"<(/?)([a-z][^\s/>]*)|<!--|<[!?/]")
_ATTRIBUTE = re.compile(r"""[\s/]*(?:(>)|[^\s/>][^\s/>=]*\s*(?:=\s*(?:"[^"]*"?|'[^']*'?|[^\s>]*))?)""")
_COMMENT_END = re.compile(r"--!?>")
_SCRIPT_DATA = re.compile(r"<!--|</script[\s/>]")
_SCRIPT_ESCAPED = re.compile(r"-->|</script[\s/>]|<script[\s/>]")
_SCRIPT_DOUBLE = re.compile(r"-->|</script[\s/>]")
_CDATA_END = "]]>"


def _tag_end(text: str, position: int, exact: bool) -> tuple[int, bool] | None:
    """``(offset after the tag's '>', self-closing)`` of a tag whose name ends at ``position``,
    attribute values in quotes read as the tokenizer reads them; ``None`` if the page ends first.
    Without ``exact`` a tag free of quotes ends at the next '>' (self-closing not told)."""
    gt = text.find(">", position)
    if gt < 0:
        return None
    if not exact and text.find('"', position, gt) < 0 and text.find("'", position, gt) < 0:
        return gt + 1, False
    match_at = _ATTRIBUTE.match
    while True:
        match = match_at(text, position)
        if match is None:
            return None
        position = match.end()
        if match.group(1):
            start = match.start(1)
            return position, start > match.start() and text[start - 1] == "/"


def _script_end(text: str, position: int) -> int:
    """Offset of the ``</script`` that ends script data begun at ``position`` (HTML5 script data,
    escaped and double-escaped states), or the end of the page."""
    state = _SCRIPT_DATA
    while True:
        match = state.search(text, position)
        if match is None:
            return len(text)
        token = match.group(0)
        if state is _SCRIPT_DATA:
            if token.startswith("</"):
                return match.start()
            state, position = _SCRIPT_ESCAPED, match.end() - 2      # "<!-->" ends the escape at once
        elif token == "-->":
            state, position = _SCRIPT_DATA, match.end()
        elif state is _SCRIPT_ESCAPED and token.startswith("</"):
            return match.start()
        elif state is _SCRIPT_ESCAPED:
            state, position = _SCRIPT_DOUBLE, match.end() - 1
        else:
            state, position = _SCRIPT_ESCAPED, match.end() - 1


def _raw_text_end(text: str, name: str, position: int) -> int:
    if name == "script":
        return _script_end(text, position)
    match = re.compile(f"</{re.escape(name)}[\\s/>]").search(text, position)
    return len(text) if match is None else match.start()


def _comment_end(text: str, position: int) -> int:
    """Offset after the comment whose ``<!--`` ends at ``position``."""
    if text.startswith(">", position):
        return position + 1
    if text.startswith("->", position):
        return position + 2
    match = _COMMENT_END.search(text, position)
    return len(text) if match is None else match.end()


def _top(indices: list[int]) -> int:
    return indices[-1] if indices else -1


class _OpenElements:
    """A model of the parser's stack of open elements (names only) and of its active formatting
    elements that are not on the stack (per marker level), with the budget's counters."""

    def __init__(self, budget: ParseBudget) -> None:
        self.budget = budget
        self.names: list[str] = []
        self.marks: list[tuple[list[int], ...]] = []   # the index lists each open element is in
        self.where: dict[str, list[int]] = {}
        self.scope: list[int] = []            # scope boundaries (select included)
        self.buttons: list[int] = []          # button: a boundary of the scope p is closed in
        self.special: list[int] = []
        self.hard: list[int] = []             # special elements but address, div and p
        self.tables: list[int] = []           # table and template
        self.lists: list[int] = []            # ul and ol
        self.markers: list[int] = []          # td, th, caption, applet, object, marquee, template
        self.foreign: list[int] = []          # svg and math roots
        self.integration: list[int] = []      # where HTML content resumes inside svg/math
        self.levels: list[dict[str, int]] = [{}]   # formatting elements closed implicitly, still active
        self.work = 0
        self.elements = 0
        self.deepest = 0
        self.cached_lists: dict[tuple[str, str], tuple[list[int], ...]] = {}

    def _lists_of(self, name: str, foreign: bool) -> tuple[list[int], ...]:
        key = (name, self.names[self.foreign[-1]] if foreign else "")
        lists = self.cached_lists.get(key)
        if lists is None:
            lists = self.cached_lists[key] = self._new_lists_of(name, foreign)
        return lists

    def _new_lists_of(self, name: str, foreign: bool) -> tuple[list[int], ...]:
        lists = [self.where.setdefault(name, [])]
        if foreign:
            if name in _INTEGRATION.get(self.names[self.foreign[-1]], ()):
                lists += [self.integration, self.scope, self.special, self.hard]
            return tuple(lists)
        for members, indices in ((_SCOPE, self.scope), (_SPECIAL, self.special), (_HARD_SPECIAL, self.hard),
                                 (_MARKERS, self.markers)):
            if name in members:
                lists.append(indices)
        if name in ("table", "template"):
            lists.append(self.tables)
        elif name in ("ul", "ol"):
            lists.append(self.lists)
        elif name in ("svg", "math"):
            lists.append(self.foreign)
        elif name == "button":
            lists.append(self.buttons)
        return tuple(lists)

    def count(self, depth: int) -> None:
        """One element inserted at ``depth``: the budget's counters and checks."""
        self.elements += 1
        self.work += depth
        self.deepest = max(self.deepest, depth)
        budget = self.budget
        if depth > budget.max_depth:
            raise _too_costly(f"HTML nests elements more than {budget.max_depth} deep (not parsed)")
        if self.work > budget.max_work:
            raise _too_costly(f"HTML too costly to parse: nesting depth x elements exceeds {budget.max_work} "
                            f"(not parsed)")
        if self.elements > budget.max_elements:
            raise _too_costly(f"HTML has more than {budget.max_elements} elements (not parsed)")

    def push(self, name: str, foreign: bool = False) -> None:
        index = len(self.names)
        lists = self._lists_of(name, foreign)
        for indices in lists:
            indices.append(index)
        self.names.append(name)
        self.marks.append(lists)
        if name in _MARKERS and not foreign:
            self.levels.append({})
        self.count(index + 1)

    def _pop(self, explicit: bool) -> None:
        name = self.names.pop()
        marker = False
        for indices in self.marks.pop():
            indices.pop()
            marker = marker or indices is self.markers
        if marker and len(self.levels) > 1:
            self.levels.pop()
        elif name in _FORMATTING and not explicit:
            level = self.levels[-1]
            level[name] = level.get(name, 0) + 1

    def pop_to(self, index: int) -> None:
        """Pop the element at ``index`` and every element above it."""
        while len(self.names) > index + 1:
            self._pop(False)
        if len(self.names) == index + 1:
            self._pop(True)

    def pop_above(self, index: int) -> None:
        """Pop every element above ``index`` (back to a table context)."""
        while len(self.names) > index + 1:
            self._pop(False)

    def reconstruct(self) -> None:
        """Push back the active formatting elements of the current level that are not open."""
        level = self.levels[-1]
        if level and not self.in_foreign():
            self.levels[-1] = {}
            for name, times in level.items():
                for _ in range(times):
                    self.push(name)

    def in_foreign(self) -> bool:
        foreign = self.foreign
        return bool(foreign) and foreign[-1] > (self.integration[-1] if self.integration else -1)

    def top_name(self) -> str:
        return self.names[-1] if self.names else ""

    def open_at(self, name: str) -> int:
        indices = self.where.get(name)
        return indices[-1] if indices else -1


class _TreeModel(_OpenElements):
    """Start and end tags applied to the model as the HTML5 tree builder applies them (simplified
    only where the model then keeps more elements open than the parser)."""

    def start(self, name: str, self_closing: bool) -> bool:
        """Apply a start tag; ``True`` when its content is raw text (or plaintext) to skip."""
        if self.in_foreign():
            if name not in _BREAKOUT:
                if self_closing:
                    self.count(len(self.names) + 1)
                else:
                    self.push(name, foreign=True)
                return False
            self.pop_to(self.foreign[-1])
        if name in _SINGLETONS or (name in _TABLE_PARTS and self._table_start(name)):
            return False
        self._implied_ends(name)
        if name == "select" and 0 <= self.open_at("select") >= _top(self.scope):
            self.pop_to(self.open_at("select"))
            return False
        if name not in _NO_RECONSTRUCT:
            self.reconstruct()
        if name in VOID or (self_closing and name in ("svg", "math")):
            self.count(len(self.names) + 1)
            return False
        self.push(name)
        return name in _RAW_TEXT or name in ("script", "plaintext")

    def _implied_ends(self, name: str) -> None:
        if name in _CLOSES_P and 0 <= self.open_at("p") >= max(_top(self.scope), _top(self.buttons)):
            self.pop_to(self.open_at("p"))
        if name == "li" and 0 <= self.open_at("li") == _top(self.hard):
            self.pop_to(self.open_at("li"))
        elif name in ("dd", "dt"):
            item = max(self.open_at("dd"), self.open_at("dt"))
            if 0 <= item == _top(self.hard):
                self.pop_to(item)
        elif name in _HEADINGS and self.top_name() in _HEADINGS:
            self.pop_to(len(self.names) - 1)
        elif name in ("option", "optgroup") and self.top_name() == "option":
            self.pop_to(len(self.names) - 1)
        elif name == "button" and 0 <= self.open_at("button") >= _top(self.scope):
            self.pop_to(self.open_at("button"))
        elif name == "a":
            self._close_formatting("a", self.open_at("a"))

    def _close_formatting(self, name: str, index: int) -> None:
        """The adoption agency, as far as depth goes: a formatting element of the current marker
        level with only phrasing elements above it is popped with them; one under a special element
        stays (the parser moves a copy under that element: the depth is the same), as does one out
        of scope (ignored); one not open leaves the active list."""
        if index > _top(self.markers):
            if index >= _top(self.scope) and index >= _top(self.special):
                self.pop_to(index)
            return
        level = self.levels[-1]
        if level.get(name):
            level[name] -= 1

    def _table_start(self, name: str) -> bool:
        """Apply a table start tag; ``False`` when it is to be inserted as any other element."""
        table = _top(self.tables)
        in_table = table >= 0 and self.names[table] == "table"
        cell = max(self.open_at("td"), self.open_at("th"), self.open_at("caption"))
        if name == "table":
            if in_table and cell < table:
                self.pop_to(table)        # a table start tag in a table ends it
            return False
        if not in_table:
            return table < 0              # ignored outside tables; inserted in a template
        if name in ("td", "th"):
            if cell > table:
                self.pop_to(cell)
            if self.open_at("tr") < table:
                self._row_context(table)
                self.push("tr")
        elif name == "tr":
            self._row_context(table)
        else:
            self.pop_above(table)
            if name == "col":
                self.count(len(self.names) + 1)
                return True
        self.push(name)
        return True

    def _row_context(self, table: int) -> None:
        """Back to the table body (inserted when missing) for a new row."""
        section = max(self.open_at(name) for name in _SECTIONS)
        if section > table:
            self.pop_above(section)
        else:
            self.pop_above(table)
            self.push("tbody")

    def end(self, name: str) -> None:
        """Apply an end tag: close what the parser closes, nothing for a stray one."""
        index = self.open_at(name)
        if self.in_foreign() and index >= self.foreign[-1]:
            self.pop_to(index)
            return
        if self.in_foreign() and name in ("p", "br"):
            self.pop_to(self.foreign[-1])        # ends the foreign element, then applies as HTML
            index = self.open_at(name)
        if name in _TABLE_PARTS:
            if index >= 0 and index >= _top(self.tables):
                self.pop_to(index)
        elif name in _FORMATTING:
            self._close_formatting(name, index)
        elif name == "br" or (name == "p" and (index < 0 or index < max(_top(self.scope), _top(self.buttons)))):
            self.count(len(self.names) + 1)      # </p> without a p, </br>: an empty element
        elif index < 0 or name in _SINGLETONS:
            return
        elif name == "li":
            if index >= max(_top(self.scope), _top(self.lists)):
                self.pop_to(index)
        elif name == "form":
            return                               # removes the form alone: the depth is about the same
        elif name in _CLOSES_P or name in _SCOPE or name in ("dialog", "button"):
            if index >= _top(self.scope):
                self.pop_to(index)
        elif index >= _top(self.special):
            self.pop_to(index)


class _Scan:
    """One pass over the lower-cased page, applying its tags to a :class:`_TreeModel`."""

    def __init__(self, text: str, budget: ParseBudget, deadline: float) -> None:
        self.text = text
        self.tree = _TreeModel(budget)
        self.budget = budget
        self.deadline = deadline

    def run(self) -> None:
        text, tree = self.text, self.tree
        search = _MARKUP.search
        position = tokens = 0
        while True:
            match = search(text, position)
            if match is None:
                return
            if tree.levels[-1] and match.start() > position:
                tree.reconstruct()      # text (whitespace too) reopens the active formatting elements
            tokens += 1
            if tokens % _CLOCK_EVERY == 0:
                check_clock(self.deadline, self.budget, "before parsing")
            name = match.group(2)
            if name is None:
                position = self._skip(match)
                continue
            end = _tag_end(text, match.end(), exact=name in ("svg", "math") or tree.in_foreign())
            if end is None:
                return                  # the page ends inside a tag: the parser drops it
            position, self_closing = end
            if match.group(1):
                tree.end(name)
            elif tree.start(name, self_closing):
                position = len(text) if name == "plaintext" else _raw_text_end(text, name, position)

    def _skip(self, match: re.Match[str]) -> int:
        """Offset after a comment, a bogus comment, a doctype or a CDATA section."""
        text, after = self.text, match.end()
        if match.group(0) == "<!--":
            return _comment_end(text, after)
        if self.tree.in_foreign() and text.startswith("[cdata[", after):
            end = text.find(_CDATA_END, after)
            return len(text) if end < 0 else end + len(_CDATA_END)
        end = text.find(">", after)
        return len(text) if end < 0 else end + 1


def _too_costly(detail: str) -> PayloadError:
    return PayloadError(OVERSIZED_PAGE, detail)


def check_clock(deadline: float, budget: ParseBudget, stage: str) -> None:
    """Raise ``PayloadError(OVERSIZED_PAGE)`` once ``deadline`` (a ``time.monotonic()``) is past."""
    if time.monotonic() > deadline:
        raise _too_costly(f"HTML parse budget of {budget.max_seconds:g} s exceeded {stage} (not parsed)")


@dataclass(frozen=True)
class HtmlCost:
    """The model's estimate: deepest nesting, work (depth summed over insertions), elements."""

    depth: int
    work: int
    elements: int


def estimate(html: str, budget: ParseBudget | None = None) -> HtmlCost:
    """The model's cost of ``html`` (the scan stops where ``budget`` is passed)."""
    scan = _Scan(html.lower(), budget or ParseBudget(), time.monotonic() + (budget or ParseBudget()).max_seconds)
    try:
        scan.run()
    except PayloadError:
        pass
    return HtmlCost(scan.tree.deepest, scan.tree.work, scan.tree.elements)


def html_cost_problem(html: str, budget: ParseBudget | None = None, started: float | None = None) -> str | None:
    """Why parsing ``html`` would pass ``budget``, or ``None``; linear in the page.  ``started``:
    the ``time.monotonic()`` the record's budget of seconds counts from (default: now)."""
    budget = budget or ParseBudget()
    size = len(html.encode("utf-8", "surrogatepass"))
    if size > budget.max_bytes:
        return f"HTML of {size} bytes exceeds the parse budget of {budget.max_bytes} bytes (not parsed)"
    deadline = (time.monotonic() if started is None else started) + budget.max_seconds
    try:
        _Scan(html.lower(), budget, deadline).run()
    except PayloadError as exc:
        return exc.detail
    return None
