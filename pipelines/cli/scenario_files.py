"""What kind of scenario a file is, read from its `kind:` (none: C2C), and which command
reads that kind: `specledger list scenarios` lists the folder with it, and a command given
another kind's file names the command to use instead of failing on the first key it does not
know.

Only the file's top-level mapping is read here, with the YAML reader every scenario loader
uses; each command's own loader still validates the file it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A scenario's kind (`kind:` in the file, C2C when it has none) -> the commands that read it.
COMMANDS = {"c2c": ("estimate", "sweep"), "tco": ("tco",), "serving": ("serving",)}
DEFAULT_KIND = "c2c"


class WrongKind(ValueError):
    """A scenario file given to a command that reads another kind (the CLI exits 2)."""


@dataclass(frozen=True)
class ScenarioFile:
    """One file of a scenarios folder as `list scenarios` shows it. `kind` is as written
    (None when the file cannot be read; `problem` then says why)."""

    path: Path
    name: str | None
    kind: str | None
    description: str
    problem: str | None = None


def read_head(path: Path, limits: Any = None) -> ScenarioFile:
    """The file's name, kind and one-line description (its `description:`, else the first
    line of the comment it opens with), without validating the rest."""
    from pipelines.inputs.limits import DEFAULT_LIMITS
    from pipelines.inputs.yaml_lines import YamlError, load_yaml, read_bounded_text

    limits = limits or DEFAULT_LIMITS
    try:
        text = read_bounded_text(path, limits)
        document = load_yaml(text, limits)
    except (YamlError, OSError, ValueError) as exc:   # ValueError: UnicodeDecodeError
        return ScenarioFile(path, None, None, "", f"cannot be read: {exc}")
    if not isinstance(document, dict):
        return ScenarioFile(path, None, None, _opening_comment(text),
                            "not a mapping of name, kind, ...")
    name = document.get("name")
    described = document.get("description")
    return ScenarioFile(path, name if isinstance(name, str) else None,
                        str(document.get("kind", DEFAULT_KIND)),
                        " ".join(str(described).split()) if described
                        else _opening_comment(text))


def _opening_comment(text: str) -> str:
    """The first line of the comment block a file opens with ("" without one)."""
    first = text.lstrip().splitlines()[:1]
    return first[0].lstrip("#").strip() if first and first[0].startswith("#") else ""


def scenario_files(folder: Path, limits: Any = None) -> list[ScenarioFile]:
    """Every YAML file of `folder`, by file name (the files the recompute graph reads)."""
    paths = sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml"))
    return [read_head(path, limits) for path in paths]


def refuse_other_kind(path: Path, kind: str, limits: Any = None) -> None:
    """Raise WrongKind, naming the command to use, when `path` is a scenario of another kind
    than `kind`; a file that cannot be read is left to the command's loader to explain."""
    found = read_head(path, limits).kind
    if found is None or found == kind:
        return
    if found not in COMMANDS:
        kinds = ", ".join(f"{k} ({' or '.join(c)})" for k, c in COMMANDS.items())
        raise WrongKind(f"{path} says `kind: {found}`: a scenario's kind is one of {kinds}; "
                        f"a file without `kind:` is {DEFAULT_KIND}")
    commands = " or ".join(f"`specledger {c} {path}`" for c in COMMANDS[found])
    said = f"`kind: {found}`" if found != DEFAULT_KIND else "C2C"
    raise WrongKind(f"{path} is a {said} scenario: use {commands}")
