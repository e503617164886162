"""`ctx signature`: show how ctx reads a shell command (a debugging tool whose
JSON is also the contract evaluations use)."""

import json
import shlex

import click

from reflex.signature import Signature, is_narrower, signature


def _command_text(words: tuple) -> str:
    # One argument is the command as written (`ctx signature "pytest -q | tail"`);
    # several are argv after `--`, re-quoted so `-k "a b"` stays one word.
    return words[0] if len(words) == 1 else shlex.join(words)


def _describe(sig: Signature, indent: str = "") -> list:
    lines = [
        f"{indent}family    {sig.family}" + (f" ({sig.subcommand})" if sig.subcommand else ""),
        f"{indent}core      {sig.core}",
        f"{indent}cwd       {sig.cwd if sig.cwd is not None else '-'}",
        f"{indent}core_hash {sig.core_hash}",
    ]
    if sig.decorations:
        lines.append(f"{indent}decorated " + ", ".join(
            f"{d.kind} {d.value}".strip() for d in sig.decorations))
    if sig.scope:
        lines.append(f"{indent}scope     " + ", ".join(f"{s.kind} {s.value}".strip() for s in sig.scope))
    if sig.reads:
        lines.append(f"{indent}reads     " + ", ".join(r.path + (f":{r.lines}" if r.lines else "") for r in sig.reads))
    if sig.writes:
        lines.append(f"{indent}writes    " + ", ".join(w.path for w in sig.writes))
    if sig.wrapper_route:
        lines.append(f"{indent}route     " + ", ".join(sig.wrapper_route))
    if len(sig.segments) > 1:
        lines.append(f"{indent}segments  {len(sig.segments)}")
        for s in sig.segments:
            lines.append(f"{indent}  {s.op or ' '} [{s.family}] {s.core}")
    return lines


@click.command("signature")
@click.option("--cwd", default=None, help="Working directory the command runs in.")
@click.option("--json", "as_json", is_flag=True, help="Print the signature as JSON.")
@click.option("--compare", is_flag=True, help="Compare two commands: ctx signature --compare A B.")
@click.argument("command", nargs=-1, required=True)
def signature_cmd(cwd, as_json, compare, command):
    """Show the signature of COMMAND: family, core, decorations, scope, reads, writes.

    Examples:

    \b
      ctx signature -- pytest -q tests/
      ctx signature "cd a && pytest -x 2>&1 | tail -5"
      ctx signature --json --compare "pytest -x" "pytest"
    """
    if compare:
        if len(command) != 2:
            raise click.UsageError("--compare takes exactly two commands: --compare A B")
        a, b = signature(command[0], cwd), signature(command[1], cwd)
        result = {
            "a": a.to_json(),
            "b": b.to_json(),
            "same_core": a.core_hash == b.core_hash,
            "same_raw": a.raw == b.raw and a.cwd == b.cwd,
            "a_narrower_than_b": is_narrower(a, b),
            "b_narrower_than_a": is_narrower(b, a),
        }
        if as_json:
            click.echo(json.dumps(result, indent=2, ensure_ascii=False))
            return
        click.echo("A:")
        click.echo("\n".join(_describe(a, "  ")))
        click.echo("B:")
        click.echo("\n".join(_describe(b, "  ")))
        for key in ("same_core", "same_raw", "a_narrower_than_b", "b_narrower_than_a"):
            click.echo(f"{key:<18}{'yes' if result[key] else 'no'}")
        return
    sig = signature(_command_text(command), cwd)
    if as_json:
        click.echo(json.dumps(sig.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(_describe(sig)))
