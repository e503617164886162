"""Every command and option is documented, and `-h` works everywhere (click CLI and fast path)."""

import subprocess
import sys

import click
import pytest

from reflex.cli import cli

from tests.conftest import ctx_cmd


def _walk(group, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _walk(cmd, prefix + (name,))


COMMANDS = list(_walk(cli))


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_and_option_has_help(path, cmd):
    assert (cmd.help or cmd.short_help or "").strip(), "ctx %s has no description" % " ".join(path)
    undocumented = [p.opts[0] for p in cmd.params
                    if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert undocumented == [], "ctx %s: options without help: %s" % (" ".join(path), undocumented)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_dash_h_works_everywhere(path):
    p = subprocess.run(ctx_cmd() + list(path) + ["-h"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "Usage:" in p.stdout, (path, p.stderr[-500:])


def test_examples_sit_on_their_own_lines():
    p = subprocess.run(ctx_cmd() + ["signature", "-h"], capture_output=True, text=True, timeout=60)
    example_lines = [line for line in p.stdout.splitlines() if line.strip().startswith("ctx signature")]
    assert len(example_lines) >= 2 and all(line.count("ctx signature") == 1 for line in example_lines), p.stdout
