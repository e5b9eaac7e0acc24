"""Every rule reference in the repository resolves inside it (docs/rules/README.md explains the scheme).

A file cites a rules document by its path, `docs/rules/<game>.md`; the section numbers (`§4.3`,
"section 9"), rules (`R7`), decisions (`AMB18`) and test vectors (`TV19`) that follow a path refer to
that document until another path is named. A file of one game (`rust_core/src/games/qwirkle/...`,
`proto/tablier/qwirkle/v1/...`, `tests/.../qwirkle.rs`) cites that game's document until it names
another. Each must be defined in it: a section as a numbered heading, a test vector as a heading, a
rule or decision as a bold label."""

import re
import subprocess
from pathlib import Path

from tablier import _core
from tablier.v1.common_pb2 import GameType

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules"

DOC_REF = re.compile(r"docs/rules/([A-Za-z0-9_]+)\.md")
OUTSIDE_REF = re.compile(r"(?:shared/)?rules/\d{3}-[\w-]+\.md|\bshared/rules\b|\b[Ss]pec(?:ification)? 00\d\b")
# Unmistakable rule numbers: a file using them must name the document they belong to.
BARE_REF = re.compile(r"§\s?\d|\bAMB\d+|\bTV\d+")
SECTION_REF = re.compile(r"(?:§\s?|\b[Ss]ections? )(\d+(?:\.\d+)*)")
ID_REF = re.compile(r"\b([A-Z]{1,3})(\d+)\b")

HEADING_SECTION = re.compile(r"^#+\s+(\d+(?:\.\d+)*)\.?\s", re.M)
HEADING_ID = re.compile(r"^#+\s+([A-Z]{1,3})(\d+)\b", re.M)
BOLD_ID = re.compile(r"\*\*([A-Z]{1,3})(\d+)\b")


def defined(doc: str) -> tuple[set[str], set[tuple[str, int]]]:
    """The section numbers and the (prefix, number) ids a rules document defines."""
    sections = set(HEADING_SECTION.findall(doc))
    ids = {(p, int(n)) for p, n in HEADING_ID.findall(doc) + BOLD_ID.findall(doc)}
    return sections, ids


def game_of(path: Path, games: set[str]) -> str | None:
    """The game a file belongs to by its place in the tree (a directory or file named after it)."""
    parts = {part.split(".")[0] for part in path.relative_to(ROOT).parts}
    found = parts & games
    return found.pop() if len(found) == 1 else None


def citations(text: str, default: str | None = None) -> list[tuple[str, str]]:
    """(document, cited item) pairs of one file: every item goes with the document path named last
    before it; before the first path, with the file's own game, else with the first path."""
    refs = [(m.start(), m.group(1)) for m in DOC_REF.finditer(text)]
    if not refs and default is None:
        return []
    out = []
    items = [(m.start(), "§" + m.group(1)) for m in SECTION_REF.finditer(text)]
    items += [(m.start(), m.group(1) + m.group(2)) for m in ID_REF.finditer(text)]
    for pos, item in sorted(items):
        doc = default or refs[0][1]
        for at, name in refs:
            if at <= pos:
                doc = name
        out.append((doc, item))
    return out


def unresolved(text: str, docs: dict[str, str], default: str | None = None) -> list[str]:
    """What one file cites that does not resolve, given the rules documents by name and the game
    the file belongs to, if any."""
    bad = [f"refers outside the repository: {m.group(0)}" for m in OUTSIDE_REF.finditer(text)]
    if default is None and not DOC_REF.search(text) and (m := BARE_REF.search(text)):
        bad.append(f"cites {m.group(0)} without naming its rules document")
    for name in sorted({m.group(1) for m in DOC_REF.finditer(text)}):
        if name not in docs:
            bad.append(f"docs/rules/{name}.md does not exist")
    for name, item in citations(text, default):
        if name not in docs:
            continue
        sections, ids = defined(docs[name])
        if item.startswith("§"):
            if item[1:] not in sections:
                bad.append(f"{item} is not a section of docs/rules/{name}.md")
            continue
        prefix, number = re.fullmatch(r"([A-Z]+)(\d+)", item).groups()
        # Only the kinds of labels the document uses are citations (not P0, D2, C1 ...).
        if prefix in {p for p, _ in ids} and (prefix, int(number)) not in ids:
            bad.append(f"{item} is not defined in docs/rules/{name}.md")
    return bad


def rules_docs() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in RULES.glob("*.md") if p.name != "README.md"}


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    out = []
    for name in names.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file() or path.is_relative_to(RULES) or path == Path(__file__).resolve():
            continue
        if path.stat().st_size > 2_000_000:
            continue
        out.append(path)
    return out


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def test_every_rule_citation_resolves():
    docs = rules_docs()
    problems, cited = [], 0
    for path in tracked_text_files():
        text = read_text(path)
        if text is None:
            continue
        game = game_of(path, set(docs))
        cited += len(citations(text, game))
        problems += [f"{path.relative_to(ROOT)}: {p}" for p in unresolved(text, docs, game)]
    assert not problems, "\n".join(problems)
    # The game code cites its rules throughout; finding almost nothing means the scan broke.
    assert cited >= 100, cited


def test_each_game_has_its_rules_document_and_the_index_lists_it():
    docs = rules_docs()
    registered = {GameType.FromString(b).id for b in _core.game_types()}
    assert set(docs) == registered, "one rules document per registered game, named by its id"
    index = (RULES / "README.md").read_text(encoding="utf-8")
    for name, doc in docs.items():
        assert f"({name}.md)" in index, name
        sections, ids = defined(doc)
        assert {str(n) for n in range(1, 11)} <= sections, (name, sorted(sections))
        assert {"R", "AMB", "TV"} <= {p for p, _ in ids}, name


def test_the_checker_catches_what_does_not_resolve():
    docs = {"g": "# G\n## 4. Turns\n### 4.2 Actions\n- **R1 Rule.** text\n- **AMB3 Choice.** text\n### TV01 — x\n"}
    good = "// Rules: docs/rules/g.md, §4.2, R1, AMB3, TV1 (P0 plays D2)"
    assert unresolved(good, docs) == []
    assert unresolved("// docs/rules/g.md §4.3", docs) == ["§4.3 is not a section of docs/rules/g.md"]
    assert unresolved("// docs/rules/g.md (AMB4)", docs) == ["AMB4 is not defined in docs/rules/g.md"]
    assert unresolved("// docs/rules/h.md", docs) == ["docs/rules/h.md does not exist"]
    assert unresolved("// as TV1 shows", docs) == ["cites TV1 without naming its rules document"]
    # A file of game g cites g's document without naming it.
    assert unresolved("// as TV1 shows (R1, §4.2)", docs, "g") == []
    assert unresolved("// as TV2 shows", docs, "g") == ["TV2 is not defined in docs/rules/g.md"]
    assert game_of(ROOT / "rust_core/src/games/g/rules.rs", {"g", "h"}) == "g"
    assert game_of(ROOT / "proto/tablier/h/v1/h.proto", {"g", "h"}) == "h"
    assert game_of(ROOT / "tests/e2e/test_api.py", {"g", "h"}) is None
    assert unresolved("// see rules/000-grid-knock.md R2", docs) == [
        "refers outside the repository: rules/000-grid-knock.md"
    ]
    # Numbers after a second path belong to the second document.
    two = {**docs, "h": "# H\n## 2. Parts\n"}
    assert unresolved("docs/rules/g.md R1; docs/rules/h.md §2", two) == []
    assert unresolved("docs/rules/h.md §2; docs/rules/g.md §2", two) == ["§2 is not a section of docs/rules/g.md"]
