"""The one Kubernetes version the emulated cluster runs, reported everywhere alike.

``/version``, the OpenAPI documents and every kubelet's ``nodeInfo`` read it from here, so
the server is never older than its kubelets (a real cluster's version-skew rule) and kubectl
sees one consistent cluster. 1.34 is also the version whose API-server behaviour the emulator
follows where versions differ (watch-list streaming is on by default from 1.34).
"""

from __future__ import annotations

from typing import Final

MAJOR: Final = 1
MINOR: Final = 34
PATCH: Final = 1
GIT_VERSION: Final = f"v{MAJOR}.{MINOR}.{PATCH}-gke.1829001"  # a GKE build, as the nodes are

VERSION_INFO: Final[dict[str, str]] = {
    "major": str(MAJOR), "minor": str(MINOR), "emulationMajor": str(MAJOR),
    "emulationMinor": str(MINOR), "minCompatibilityMajor": str(MAJOR),
    "minCompatibilityMinor": str(MINOR - 1), "gitVersion": GIT_VERSION,
    "gitCommit": "gputui-sim", "gitTreeState": "clean", "buildDate": "2025-09-10T00:00:00Z",
    "goVersion": "go1.24.6", "compiler": "gc", "platform": "linux/amd64",
}
