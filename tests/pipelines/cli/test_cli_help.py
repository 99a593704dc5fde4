"""`--help` as a new user reads it: values named as click names them (PATH, TEXT), no typer
type labels (`<bool>`, `<list[Path]>`), arguments as `PATHS...` (not `{paths}`), each
command's summary one paragraph; and output to a pipe is not cut to 80 columns."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from pipelines.cli.app import app
from pipelines.cli.terminal import PIPED_WIDTH, plain_console

COMMANDS = ("run", "report", "ingest", "value", "review", "serve", "migrate", "estimate",
            "sweep", "validate", "tco", "serving", "export", "list", "flags", "changes")


def help_of(*command: str, columns: int = 100) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": str(columns)},
                                prog_name="specledger")
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", [(), *((c,) for c in COMMANDS)])
def test_help_shows_no_type_labels_or_braces(command):
    shown = help_of(*command)
    assert not re.search(r"<(bool|str|int|float|path|list\[[^]]*\])>", shown, re.I), shown
    assert "{" not in shown and "}" not in shown


def test_options_and_arguments_are_named_as_click_names_them():
    shown = help_of("ingest")
    assert "Usage: specledger ingest [OPTIONS] PATHS..." in shown
    assert re.search(r"--home\s+PATH\s", shown) and re.search(r"--as-of\s+TEXT\s", shown)
    assert re.search(r"--json\s+Print one JSON object", shown)  # a flag takes no value


def test_a_commands_summary_is_one_paragraph_not_the_docstrings_lines():
    shown = help_of(columns=200)
    [report] = [line for line in shown.splitlines() if "│ report" in line]
    assert "same dataset version, same bytes as the briefing of that date" in report


def test_output_to_a_pipe_is_laid_out_wide(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    console = plain_console()
    assert not console.is_terminal and console.width == PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "90")
    assert plain_console().width == 90  # asked for: as asked


def _options_of(command: str) -> list:
    import typer.main

    group = typer.main.get_command(app)
    return [p for p in group.commands[command].params
            if p.param_type_name == "option" and not p.is_flag and p.name != "help"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_that_takes_a_value_says_its_default(command):
    """Issue 42: a default written into the help text as `[default: ...]` was read as rich
    markup and vanished; each option now gives it as show_default, and help prints it."""
    silent = [o.name for o in _options_of(command)
              if o.default is None and not isinstance(o.show_default, str)]
    assert silent == []
    shown = " ".join(help_of(command, columns=200).split())
    assert shown.count("[default: ") >= len(_options_of(command))


def test_home_shows_its_default_and_what_specledger_home_makes_it():
    import os
    import subprocess
    import sys

    assert "[default: ./var]" in help_of("list")
    env = {**os.environ, "SPECLEDGER_HOME": "/srv/ledger", "COLUMNS": "200"}
    shown = subprocess.run([sys.executable, "-c", "from pipelines.cli.app import main; main()",
                            "value", "--help"], env=env, capture_output=True, text=True,
                           check=True).stdout
    assert "[default: /srv/ledger, from SPECLEDGER_HOME]" in shown


HEAVY = ("sqlalchemy", "pandas", "numpy", "pint", "duckdb", "prefect", "weasyprint")


@pytest.mark.parametrize("command", [["--help"], ["tco", "--help"], ["list", "scenarios"]])
def test_help_and_list_scenarios_load_none_of_the_heavy_libraries(command):
    """Issue 42: --help, --version and list stay under a second; each library here costs a
    tenth of one or more to import, so only the commands that use one import it."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom pipelines.cli.app import main\nsys.argv = ['specledger', "
            f"*{command!r}]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = json.loads(done.stderr.strip().splitlines()[-1])   # the list printed last
    assert [name for name in HEAVY if name in loaded] == []


def test_the_cli_knows_the_formats_the_warehouse_exports():
    from db.warehouse_export import FORMATS
    from pipelines.cli.export import FORMATS as SHOWN

    assert SHOWN == FORMATS
