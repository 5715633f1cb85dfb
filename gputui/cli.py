"""The ``gputui`` command line: parse arguments, build :class:`Settings`, dispatch.

The names of commands and flags are a public contract (ARCHITECTURE.md, "CLI contract").
Every error an operator can cause is one line on stderr and a non-zero exit, never a
traceback: argparse errors and :class:`CliError` exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from gputui import __version__
from gputui.settings import Settings, SettingsError, load_settings


class CliError(Exception):
    """An operator-facing error: printed as ``gputui: <message>``, exit code ``code``."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) so scripts and people see the cause."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {text!r}")
    return value


def _connection_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kubeconfig", metavar="PATH",
                        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context to use")
    parser.add_argument("--namespace", metavar="NS",
                        help="GPU Operator namespace (default: discovered)")
    parser.add_argument("--prometheus-url", metavar="URL", help="Prometheus base URL for DCGM metrics")
    parser.add_argument("--config", metavar="PATH", help="gputui config file")
    parser.add_argument("--log-file", metavar="PATH",
                        help="write a debug log here (requests, retries, errors; no secrets)")


def _demo_flags(parser: argparse.ArgumentParser, with_demo: bool = True) -> None:
    if with_demo:
        parser.add_argument("--demo", action="store_true", default=None,
                            help="run against the built-in emulated GPU cluster")
    parser.add_argument("--scenario", metavar="NAME",
                        help="emulated scenario (see 'gputui scenarios'; default healthy)")
    parser.add_argument("--speed", metavar="X", type=_positive_float,
                        help="emulated clock speed factor (default 1)")


#: ``gputui check --format`` values
FORMATS = ("table", "markdown")

_FAULTS_HELP = """faults (gputui sim --faults SPEC, or a scenario file's 'faults:' list):
  scenario events   xid:NODE:GPU:CODE, crashloop:POOL|NODE, driver-in-use:POOL|NODE,
                    kernel:POOL:VERSION, validator-stuck:POOL|NODE, mig:POOL|NODE:CONFIG,
                    mig-fail:POOL|NODE, driver:VERSION, join:POOL:COUNT, cordon:NODE,
                    driver-unscheduled:NODE, remap:NODE:GPU; GPU health:
                    xid-alone:NODE:GPU:CODE, rows:NODE:GPU, pcie:NODE:GPU,
                    nvlink:NODE:GPU, throttle:NODE:GPU:thermal|power, offbus:NODE:GPU,
                    reboot:POOL|NODE; @TIME in emulated time (30s, 5m)
  API faults        KIND[:ARG][~PATH][%PERCENT][@START][+DURATION], wall-clock seconds:
                    latency:MS, 429[:RETRY_AFTER], 500, 503[:RETRY_AFTER], reset,
                    watch-close, watch-410, down, forbid:RESOURCE, evict-refuse,
                    exporter-hang, exporter-garbage; seed:N seeds the random draws
  example           gputui sim --faults '429:1%50,down@30s+20s,xid:h100/0:3:79@1m'"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gputui", description=(
        "Terminal UI for on-call operators of Kubernetes GPU clusters run by the NVIDIA GPU "
        "Operator. Without a command it opens the TUI."))
    parser.add_argument("--version", action="version", version=f"gputui {__version__}")
    _connection_flags(parser)
    parser.add_argument("--read-only", action="store_true", default=None,
                        help="never change the cluster; hide every action")
    parser.add_argument("--audit-log", metavar="PATH", help="append applied actions here")
    parser.add_argument("--record", metavar="FILE", dest="record_file",
                        help="record the session to FILE (replay it with 'gputui check "
                             "--replay FILE --at TIME')")
    parser.add_argument("--refresh", metavar="SECONDS", type=_positive_float,
                        help="metrics refresh interval (default 2)")
    parser.add_argument("--local", action="store_true", default=None,
                        help="show this machine's GPUs through NVML (run on a GPU node)")
    _demo_flags(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    sim = commands.add_parser("sim", help="serve the emulated GPU cluster (no TUI)",
                              description="Serve the emulated GPU cluster's Kubernetes API.")
    _demo_flags(sim, with_demo=False)
    sim.add_argument("--port", type=_port, default=0, help="API server port (default: free port)")
    sim.add_argument("--kubeconfig-out", metavar="PATH", help="write a kubeconfig for it here")
    sim.add_argument("--kubeconfig-context", metavar="NAME",
                     help="name of that kubeconfig's context and cluster (default gputui-demo)")
    sim.add_argument("--exporters-port", type=_port, metavar="N",
                     help="also serve each node's dcgm-exporter on loopback ports from N")
    sim.add_argument("--faults", metavar="SPEC",
                     help="extra faults: scenario events (xid:NODE:GPU:CODE@30s ...) and API "
                          "faults KIND[:ARG][~PATH][%%PERCENT][@START][+DURATION] (429, 500, 503, "
                          "latency, reset, watch-close, watch-410, down, forbid, evict-refuse, "
                          "exporter-hang, exporter-garbage; seed:N); see README")
    sim.add_argument("--deny", metavar="SPEC",
                     help="refuse verbs as RBAC would, e.g. patch:nodes,create:pods/eviction")
    sim.add_argument("--identity", metavar="NAME",
                     help="the user the server says you are (kubectl auth whoami; default "
                          "operator)")
    sim.add_argument("--groups", metavar="LIST",
                     help="that user's groups, comma-separated (default system:authenticated)")

    check = commands.add_parser("check", help="print findings and exit 0/1/2 (no TUI)",
                                description="Connect, build one snapshot and report findings.")
    check.add_argument("--json", action="store_true", help="print the JSON report")
    check.add_argument("--format", choices=FORMATS, default=None,
                       help="table (default) or markdown: the handoff summary, with the "
                            "audit log's last 24 h")
    _connection_flags(check)
    _demo_flags(check)
    check.add_argument("--replay", metavar="FILE",
                       help="report from a recording (gputui --record) instead of a cluster")
    check.add_argument("--at", metavar="TIME",
                       help="with --replay: HH:MM[:SS] (UTC), RFC 3339, +5m from the start "
                            "or -30s from the end (write --at=-30s)")

    replay = commands.add_parser("replay", help="the TUI on a recording (gputui --record)",
                                 description="Open the TUI on a recording, read-only, with a "
                                             "time cursor (space, left/right, g/G, t).")
    replay.add_argument("file", metavar="FILE", help="a recording written by --record")
    replay.add_argument("--config", metavar="PATH", help="gputui config file")

    commands.add_parser("scenarios", help="list the emulated scenarios",
                        description="List the emulated cluster's scenarios.",
                        epilog=_FAULTS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Turn parsed flags into :class:`Settings` (file, then environment, then flags)."""
    flags: dict[str, Any] = {}
    for name in ("kubeconfig", "context", "namespace", "prometheus_url", "read_only",
                 "audit_log", "refresh", "demo", "scenario", "speed", "local", "log_file",
                 "record_file"):
        flags[name] = getattr(args, name, None)
    return load_settings(getattr(args, "config", None), flags=flags)


def _run(args: argparse.Namespace) -> int:
    if args.command == "scenarios":
        from gputui.sim.scenario import list_scenarios

        for name, summary in list_scenarios():
            print(f"{name:<22} {summary}")
        return 0
    if args.command == "sim":
        from gputui.sim.serve import run_sim

        return run_sim(args)
    settings = settings_from_args(args)
    _start_log(settings.log_file)
    if args.command == "check":
        from gputui.check import run_check
        from gputui.sources.keyfiles import remove_on_signals

        remove_on_signals()  # a SIGTERM mid-check must not leave a key file behind

        if args.json and args.format:
            raise CliError("--json and --format cannot be combined (--json is the script "
                           "contract)")
        return run_check(settings, as_json=args.json, fmt=args.format or "table",
                         replay=_replay_args(args))
    from gputui.ui.run import run_tui

    if args.command == "replay":
        return run_tui(settings, "replay", args.file)
    return run_tui(settings)


#: what ``check --replay`` cannot be combined with: it reads a file, not a cluster
_NOT_WITH_REPLAY = ("kubeconfig", "context", "namespace", "prometheus_url", "demo", "scenario",
                    "speed", "local")


def _replay_args(args: argparse.Namespace) -> tuple[str, str] | None:
    """(FILE, TIME) of ``check --replay FILE --at TIME``; CliError for a bad combination."""
    replay, at = getattr(args, "replay", None), getattr(args, "at", None)
    if replay is None:
        if at is not None:
            raise CliError("--at needs --replay FILE")
        return None
    given = [f"--{name.replace('_', '-')}" for name in _NOT_WITH_REPLAY
             if getattr(args, name, None) not in (None, False)]
    if given:
        raise CliError(f"--replay reads a recording, not a cluster: it cannot be combined "
                       f"with {', '.join(given)}")
    if at is None:
        raise CliError("--replay needs --at TIME (HH:MM[:SS] UTC, RFC 3339, +5m from the "
                       "start, or --at=-30s from the end)")
    return replay, at


def _start_log(path: str | None) -> None:
    """Open the debug log before anything connects; an unwritable path is one line, exit 2."""
    from gputui.logsetup import configure_logging
    from gputui.privatefile import PrivateFileError

    try:
        configure_logging(path)
    except PrivateFileError as error:
        raise CliError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gputui`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (CliError, SettingsError) as error:
        from gputui.logsetup import redact

        print(f"gputui: {redact(str(error))}", file=sys.stderr)
        return getattr(error, "code", 2)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
