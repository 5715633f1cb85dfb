"""``gputui sim``: serve the emulated GPU cluster's Kubernetes API until interrupted.

Prints one line with the URL and how to point kubectl at it, then waits for Ctrl-C or
SIGTERM and stops the cluster cleanly (exit 0). A scenario that cannot be loaded is one
line on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable

from gputui.shutdown import handle_signals
from gputui.sim.apiserver.rbac import parse_identity
from gputui.sim.cluster import DEFAULT_CONTEXT, EmulatedCluster


def _start(args: argparse.Namespace) -> EmulatedCluster:
    cluster = EmulatedCluster(
        getattr(args, "scenario", None) or "healthy",
        speed=getattr(args, "speed", None) or 1.0,
        port=getattr(args, "port", None) or 0,
        exporters_port=getattr(args, "exporters_port", None),
        faults=getattr(args, "faults", None),
        deny=getattr(args, "deny", None),
        identity=parse_identity(getattr(args, "identity", None), getattr(args, "groups", None)),
    )
    return cluster.start()


def _announce(cluster: EmulatedCluster, kubeconfig_out: str | None,
              context: str | None = None) -> None:
    if kubeconfig_out:
        # a named context lets two sims' kubeconfigs merge into one (``:ctx`` between them)
        path = cluster.write_kubeconfig(kubeconfig_out, context or DEFAULT_CONTEXT)
        how = f"export KUBECONFIG={path}"
    else:
        how = f"kubectl --server {cluster.url} get nodes (or pass --kubeconfig-out PATH)"
    print(f"gputui sim: scenario {cluster.scenario_name!r} serving the Kubernetes API at "
          f"{cluster.url} ; {how} ; Ctrl-C to stop", flush=True)


def _stop_on_signals() -> tuple[threading.Event, Callable[[], None]]:
    """(an event SIGINT or SIGTERM sets, the call that puts the old handlers back). Taken
    before the ready line is printed: a script that stops the sim as soon as it reads that
    line must get exit 0, not the default handler's death by signal."""
    stop = threading.Event()
    restore = handle_signals(lambda _sig: stop.set(), (signal.SIGINT, signal.SIGTERM))
    return stop, restore


def run_sim(args: argparse.Namespace) -> int:
    """Entry point of ``gputui sim``; returns the process exit code."""
    try:
        cluster = _start(args)
    except (ValueError, KeyError, FileNotFoundError) as error:
        message = str(error).strip().strip("'\"") or type(error).__name__
        print(f"gputui sim: {message.splitlines()[0]}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"gputui sim: cannot serve: {error}", file=sys.stderr)
        return 2
    stop, restore = _stop_on_signals()
    try:
        _announce(cluster, getattr(args, "kubeconfig_out", None),
                  getattr(args, "kubeconfig_context", None))
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        restore()
        cluster.stop()
    return 0
