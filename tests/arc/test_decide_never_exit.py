"""Commands that never exit on their own pass untouched (issue 30, item 7): dev servers, watch
modes, runners listening on stdin, shell background jobs.  ctx run prints its digest only when the
command exits, so wrapping one would hide its progress ("ready on …") until the harness kills it;
without the rewrite the harness streams, backgrounds and kills it exactly as it does without ctx.
The same runners without their watch form are still digested."""

import pytest

from reflex.arc.decide import decide_bash, never_exits
from reflex.signature import signature
from tests.arc.test_decide_reach import _Allow, _decide


NEVER_EXIT = [
    # package scripts named for a server or a watcher, through every package manager
    "npm run dev", "npm start", "npm run serve", "npm run watch", "npm run preview", "pnpm dev",
    "pnpm run start", "yarn dev", "yarn watch", "bun run dev", "bun dev", "npm run storybook",
    "npm run dev:api", "npm run start:dev", "npm run test:watch", "npm run serve-docs", "yarn watch:css",
    "npm --prefix web run dev", "cd web && npm run dev", "timeout 60 npm run dev",
    # any statement of the line: ctx run would wrap all of it
    "npm run build && npm run dev", "npm run lint; npm start",
    # watch flags handed on to the script's runner
    "npm test -- --watch", "npm run test -- --watchAll", "pnpm test --watch", "yarn test --watch",
    # runners in their watch, serve or listen form
    "jest --watch", "jest --watchAll", "npx jest --watch", "vitest watch", "vitest dev", "vitest --watch",
    "vitest -w", "npx vitest --ui", "tsc --watch", "tsc -w", "npx tsc -b -w", "tsc --build --watch",
    "node --test --watch", "deno test --watch", "bun test --watch", "ruff check --watch", "ruff check -w",
    "pytest -f", "pytest --looponfail", "gradle test --continuous", "gradle test -t",
    "playwright test --ui", "gotestsum --watch", "mix test --listen-on-stdin",
    # a job left running in the shell's background
    "npm test &", "pytest -q & sleep 1; echo started",
]

STILL_DIGESTED = [
    "npm test", "npm run test", "npm run build", "npm run lint", "pnpm test", "yarn test", "bun run build",
    "npm run test:unit", "npm run test:e2e", "npm run build:prod",
    # vitest bare runs once and exits without a TTY (the harness's Bash has none): vitest 3.2.7 with
    # stdin from /dev/null or a pipe exited 0 after one run; on a TTY it watched until killed
    "vitest", "npx vitest", "vitest run", "vitest --run", "vitest --watch=false",
    "jest", "jest -w 2", "jest --watch=false", "npx jest --ci",     # jest's -w is --maxWorkers
    "tsc --noEmit", "tsc -b", "node --test", "deno test", "bun test", "ruff check .", "pytest -q",
    "gradle test", "playwright test", "gotestsum", "mix test", "pytest -q 2>&1 | tail -40",
    "npm test && echo done",
]


@pytest.mark.parametrize("command", NEVER_EXIT)
def test_never_exiting_command_passes_untouched(command):
    d = _decide(command)
    assert d.action == "pass", (command, d)
    assert "does not exit" in d.why or "background" in d.why, (command, d.why)
    assert not d.held_back, "no digest to hold back: the post hook must not digest a killed server either"


@pytest.mark.parametrize("command", STILL_DIGESTED)
def test_the_same_runners_without_a_watch_are_still_digested(command):
    d = _decide(command)
    assert d.action == "rewrite", (command, d)
    assert never_exits(signature(command)) is None


def test_the_reason_names_what_never_exits():
    assert never_exits(signature("npm run build && npm run dev")) == "script dev serves or watches: it does not exit"
    assert never_exits(signature("tsc -w")) == "tsc watches or listens: it does not exit"
    assert never_exits(signature("vitest watch")) == "vitest watch watches: it does not exit"


def test_background_task_still_passes_before_anything_else():
    d = decide_bash("npm test", {"run_in_background": True}, signature("npm test"), launcher="ctx",
                    permission=_Allow())
    assert (d.action, d.why) == ("pass", "background task")
