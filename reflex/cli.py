"""The `ctx` command-line interface (click), a thin layer over the library.

Agent-facing commands (hook, run, get, search) never reach this module: the
entry point dispatches them on a stdlib-only path.  They are listed here so
`ctx --help` documents them.  Subcommands are imported lazily, one module per
command group under reflex/commands/, so `ctx --help` stays fast.
"""

import importlib
import sys

import click

from reflex import __version__
from reflex.errors import CtxError


class _Reported(click.ClickException):
    """A CtxError on its way out: click prints `Error: <message>` and exits with its code."""

    def __init__(self, error):
        super().__init__(str(error))
        self.exit_code = error.exit_code


class LazyGroup(click.Group):
    def __init__(self, *args, lazy=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def invoke(self, ctx):
        # The CLI's one error edge: every expected failure is a CtxError, whatever layer raised
        # it; its message is the whole report and its exit code is the convention of
        # reflex.errors (1: fix the input; 3: ctx failed).
        try:
            return super().invoke(ctx)
        except CtxError as e:
            raise _Reported(e) from None

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            mod, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(mod), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             lazy={
    "daemon": "reflex.commands.daemon_cmd:daemon",
    "paths": "reflex.commands.daemon_cmd:paths_cmd",
    "install": "reflex.commands.install_cmd:install",
    "uninstall": "reflex.commands.install_cmd:uninstall",
    "doctor": "reflex.commands.doctor_cmd:doctor",
    "ledger": "reflex.commands.ledger_cmd:ledger",
    "demo": "reflex.commands.demo_cmd:demo",
    "signature": "reflex.commands.signature_cmd:signature_cmd",
    "digest": "reflex.commands.digest_cmd:digest_cmd",
    "replay": "reflex.commands.replay_cmd:replay_cmd",
    "stats": "reflex.commands.stats_cmd:stats_cmd",
    "policy": "reflex.commands.policy_cmd:policy_group",
    "hook": "reflex.commands.fast_cmd:hook",
    "run": "reflex.commands.fast_cmd:run",
    "get": "reflex.commands.fast_cmd:get",
    "search": "reflex.commands.fast_cmd:search",
})
@click.version_option(__version__, prog_name="ctx")
def cli():
    """ctx: the reflex layer between a coding agent and its shell."""


def main(argv=None):
    try:
        cli.main(args=argv, prog_name="ctx", standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
