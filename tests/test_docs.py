"""The documentation as a user meets it (no Spark): a short README whose Quick start comes first,
a docs site that builds strictly, command lines that the CLI's own parser accepts, and no
development diary in the tree."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import linkgraph
from linkgraph.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOC_PAGES = sorted((ROOT / "docs").glob("*.md"))

QUICK_START = [
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/linkgraph run --lake lake",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/python -m pytest -q",
]
HISTORY = re.compile(r"\bsession \d+\b|\bissue \d+\b", re.IGNORECASE)
HISTORY_EXEMPT = {"CHANGELOG.md"}

# `linkgraph SUB ...` in an inline code span, or at the start of a line of a fenced block
INLINE_COMMAND = re.compile(r"`((?:\.venv/bin/)?linkgraph [^`\n]+)`")
FENCE = re.compile(r"^```")
FLAG = re.compile(r"^-{1,2}[A-Za-z][\w-]*")
# usage notation rather than one concrete command line: only flags and choices are checked
USAGE_MARKS = re.compile(r"[\[\]{}|…]|\.\.\.")


def _fenced_lines(text: str) -> list[str]:
    """The lines of fenced code blocks, continuation lines (``\\``) joined."""
    lines, inside, pending = [], False, ""
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    return lines


def command_lines(text: str) -> list[str]:
    """Every ``linkgraph …`` command line a Markdown text shows, as written after ``linkgraph``."""
    found = [match.group(1) for match in INLINE_COMMAND.finditer(text)]
    for line in _fenced_lines(text):
        for segment in re.split(r"&&|;|\|\s", line):
            words = segment.strip().removeprefix("$ ").strip()
            if re.match(r"^(?:\S*/)?linkgraph\s", words):
                found.append(words)
    return [re.sub(r"^(?:\S*/)?linkgraph\s+", "", command).strip() for command in found]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the CLI has no subcommands")


def _clean(word: str) -> str:
    return word.strip("[](),;:").replace("\\|", "|")


def problems_of(command: str, parser: argparse.ArgumentParser) -> list[str]:
    """What is wrong with one command line (the words after ``linkgraph``): an unknown subcommand,
    a flag the subcommand lacks, a value outside a flag's choices, or a concrete line the parser
    refuses (missing required options aside: prose may show a partial command)."""
    words = command.split()
    if not words or words[0] in ("--version", "--help", "-h"):
        return []
    subcommands = _subparsers(parser)
    if words[0] not in subcommands:
        return [f"`linkgraph {command}`: no subcommand {words[0]!r}"]
    sub = subcommands[words[0]]
    options = sub._option_string_actions
    found = []
    cleaned = [_clean(word) for word in words[1:]]
    for index, word in enumerate(cleaned):
        for part in word.split("|"):
            flag = FLAG.match(part.split("=", 1)[0])
            if flag is None:
                continue
            if flag.group(0) not in options:
                found.append(f"`linkgraph {command}`: {words[0]} has no option {flag.group(0)}")
                continue
            choices = options[flag.group(0)].choices
            value = part.split("=", 1)[1] if "=" in part else (cleaned[index + 1] if index + 1 < len(cleaned) else "")
            if choices and value and value == value.lower() and not FLAG.match(value):
                wrong = [choice for choice in value.split("|") if choice and choice not in choices]
                if wrong:
                    found.append(f"`linkgraph {command}`: {flag.group(0)} takes none of {wrong}")
    if not found and not USAGE_MARKS.search(command):
        try:
            parser.parse_args(shlex.split(command))
        except (Exception, SystemExit) as exc:  # the project's parser raises; argparse may exit
            if "required" not in str(exc):
                found.append(f"`linkgraph {command}`: {exc}")
    return found


def test_readme_is_short_and_starts_with_the_quick_start():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert blocks and blocks[0].splitlines() == QUICK_START
    assert text.index("## Quick start") < text.index("```")


def test_no_development_history_in_the_tree():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: no list of tracked files")
    hits = []
    for name in tracked:
        path = ROOT / name
        if name in HISTORY_EXEMPT or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # binary
        hits += [f"{name}:{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
                 if HISTORY.search(line)]
    assert not hits, "development history belongs in git log and CHANGELOG.md:\n" + "\n".join(hits)


def test_the_history_rule_spares_spark_sessions():
    numbered = "12"   # joined here, so that this file does not match the rule it tests
    assert HISTORY.search("as in session " + numbered) and HISTORY.search("(Issue " + numbered + ")")
    assert not HISTORY.search("SparkSession 2 builders") and not HISTORY.search("a tissue 4")


def test_every_command_line_in_readme_and_docs_parses():
    parser = build_parser()
    pages = [README, *DOC_PAGES]
    commands = {page.name: command_lines(page.read_text()) for page in pages}
    assert sum(map(len, commands.values())) >= 30, commands
    found = [f"{page}: {problem}" for page, lines in commands.items() for line in lines
             for problem in problems_of(line, parser)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("doc", "complaint"),
    [
        ("Run `linkgraph pagerank --max-iters 5` to cap.", "no option --max-iters"),
        ("```bash\n.venv/bin/linkgraph ingest --input x.jsonl --formats csv\n```", "no option --formats"),
        ("`linkgraph rank --lake lake`", "no subcommand 'rank'"),
        ("`linkgraph export --level host --format graphml --output out`", "takes none of ['graphml']"),
        ("`linkgraph links --lake lake sideways https://a.example/`", "invalid choice"),
        ("```\nlinkgraph centrality --level page \\\n  --registerz 64\n```", "no option --registerz"),
    ],
)
def test_a_misspelled_command_line_is_caught(doc, complaint):
    problems = [problem for line in command_lines(doc) for problem in problems_of(line, build_parser())]
    assert problems and complaint in problems[0], problems


def test_usage_notation_is_checked_flag_by_flag():
    parser = build_parser()
    assert not problems_of("pagerank [--topic TERMS | --seeds URLS] [--tol 1e-6] [--lake DIR]", parser)
    assert not problems_of("ingest --input PATH [--format parquet\\|jsonl\\|csv]", parser)
    assert problems_of("ingest --input PATH [--format parquet|yaml]", parser)


def test_version_is_the_packages(capsys):
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert linkgraph.__version__ == declared
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"linkgraph {declared}"


def test_docs_site_builds_strictly(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    built = {path.relative_to(tmp_path / "site").parts[0] for path in (tmp_path / "site").rglob("index.html")}
    assert {page.stem for page in DOC_PAGES if page.stem != "index"} <= built


def test_benchmark_rows_carry_peer_commit_and_date():
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    headers = [line for line in text.splitlines() if line.startswith("| figure")]
    assert headers, "docs/benchmarks.md has no table"
    for header in headers:
        columns = [cell.strip() for cell in header.strip("|").split("|")]
        assert {"figure", "peer", "ratio", "input", "machine", "commit", "date"} <= set(columns), header
    rows = re.findall(r"^\| .*\| ([0-9a-f]{7,12}) \| (20\d\d-\d\d-\d\d) \|$", text, flags=re.MULTILINE)
    assert len(rows) >= 20
