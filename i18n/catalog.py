"""The catalog, made and checked with babel: `python -m i18n.catalog` extracts every marked message of the
tree (`_`, `n_`, `N_`, `later`, `later_n`), keeps each one's translation from `i18n/locale/zh/.../anatomy.po`
(and from the drafts in `i18n/work/*.po` or `*.json`, which `--fold` then removes), writes the catalog back and compiles
its `.mo`. `python -m i18n.catalog --check` changes nothing and says what is missing, fuzzy, broken or stale."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from i18n import DOMAIN, LOCALE_DIR

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("model", "viz", "views", "ui", "pages")
FILES = ("app.py", "serve.py")
KEYWORDS = {"_": None, "N_": None, "n_": (1, 2), "later": None, "later_n": (1, 2)}
WORK = Path(__file__).resolve().parent / "work"
LANGUAGE = "zh"
# One date in every build's header (babel writes one; the day's own would make every build a change)
DATED = datetime(2026, 12, 3, tzinfo=UTC)
FIELD = re.compile(r"\{(\w*)[^{}]*\}")


def po_path(code: str = LANGUAGE) -> Path:
    """Where a language's catalog lives."""
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def source_files() -> list[Path]:
    """Every file of the tree whose messages are shown."""
    files = [path for folder in SOURCES for path in sorted((ROOT / folder).rglob("*.py"))]
    return files + [ROOT / name for name in FILES if (ROOT / name).exists()]


def extracted() -> Catalog:
    """Every marked message of the tree, with where it is written."""
    catalog = Catalog(
        locale=LANGUAGE,
        domain=DOMAIN,
        project="Transformer Anatomy",
        copyright_holder="Transformer Anatomy",
        msgid_bugs_address="the project's issues",
        last_translator="Transformer Anatomy",
        language_team="简体中文",
        creation_date=DATED,
        revision_date=DATED,
        fuzzy=False,
        header_comment=(
            "# Transformer Anatomy's interface in Simplified Chinese (简体中文).\n"
            "# Written by `python -m i18n.catalog` from the tree's marked messages; its terms are i18n/glossary.tsv's."
        ),
    )
    for path in source_files():
        for line, message, comments, _context in extract_from_file(
            "python", str(path), keywords=KEYWORDS, comment_tags=("i18n:",), strip_comment_tags=True
        ):
            if message and (not isinstance(message, tuple) or message[0]):
                catalog.add(message, locations=[(str(path.relative_to(ROOT)), line)], auto_comments=comments)
    return catalog


def _read(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=LANGUAGE)


def translations() -> dict[str, Any]:
    """What is translated already: the catalog's, then the drafts' (a draft wins over the catalog)."""
    known: dict[str, Any] = {}
    sources = [po_path()] if po_path().exists() else []
    sources += sorted(WORK.glob("*.po"))
    for path in sources:
        for message in _read(path):
            if message.id and message.string and (not isinstance(message.string, tuple) or all(message.string)):
                known[message.id if isinstance(message.id, str) else message.id[0]] = message.string
    for draft in sorted(WORK.glob("*.json")):  # {"English": "中文"}, a plural's English its singular
        for english, string in json.loads(draft.read_text(encoding="utf-8")).items():
            if string:
                known[english] = tuple(string) if isinstance(string, list) else string
    return known


def fields(text: str) -> set[str]:
    """The named fields a message fills ({n}, {name:,})."""
    return {m.group(1) for m in FIELD.finditer(text)}


def problems(catalog: Catalog) -> list[str]:
    """Messages without a translation, or whose translation fills other fields than the English."""
    found = []
    for message in catalog:
        if not message.id:
            continue
        ids: tuple[str, ...] = tuple(message.id) if isinstance(message.id, (tuple, list)) else (message.id,)
        strings = tuple(message.string) if isinstance(message.string, (tuple, list)) else (message.string or "",)
        where = ", ".join(f"{f}:{n}" for f, n in message.locations[:2])
        if not all(strings):
            found.append(f"untranslated ({where}): {ids[0]!r}")
            continue
        wanted = set().union(*(fields(i) for i in ids))
        for string in strings:
            if fields(string) != wanted:
                found.append(f"fields differ ({where}): {ids[0]!r} -> {string!r}")
    return found


def build() -> Catalog:
    """The catalog of today's tree, each message with its known translation."""
    catalog = extracted()
    known = translations()
    for message in catalog:
        key = message.id if isinstance(message.id, str) else message.id[0]
        if key in known:
            string = known[key]
            if isinstance(message.id, tuple) and isinstance(string, str):
                string = (string,)
            message.string = string
    return catalog


def po_text(catalog: Catalog) -> bytes:
    """The catalog as the .po file keeps it (no dates, sorted by message, so a diff shows only what changed)."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=120, sort_output=True, omit_header=False, include_lineno=False)
    text = buffer.getvalue().decode()
    text = re.sub(r'"(POT-Creation|PO-Revision)-Date: [^"]*\\n"\n', "", text)
    return text.encode()


def mo_bytes(catalog: Catalog) -> bytes:
    """The compiled catalog."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


def write(catalog: Catalog) -> None:
    """Write the .po and its .mo, each through a file beside it (another process never reads half a file)."""
    path = po_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, data in ((path, po_text(catalog)), (path.with_suffix(".mo"), mo_bytes(catalog))):
        temporary = target.with_suffix(target.suffix + ".tmp")
        temporary.write_bytes(data)
        temporary.replace(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; list what is missing or stale")
    parser.add_argument("--fold", action="store_true", help="remove the drafts once folded into the catalog")
    args = parser.parse_args(argv)
    catalog = build()
    found = problems(catalog)
    if args.check:
        stale = po_path().exists() and po_path().read_bytes() != po_text(catalog)
        if stale:
            found.append(f"{po_path().relative_to(ROOT)} is not today's tree: run python -m i18n.catalog")
        mo = po_path().with_suffix(".mo")
        if not mo.exists() or mo.read_bytes() != mo_bytes(catalog):
            found.append(f"{mo.relative_to(ROOT)} is not compiled from the catalog: run python -m i18n.catalog")
        print("\n".join(found) or f"{len(catalog)} messages, all translated")
        return 1 if found else 0
    write(catalog)
    if args.fold:
        for draft in [*WORK.glob("*.po"), *WORK.glob("*.json")]:
            draft.unlink()
    print(f"{len(catalog)} messages, {len(found)} to do" + "".join(f"\n  {line}" for line in found[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
