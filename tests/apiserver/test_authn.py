"""The emulated server's optional token check, judged by kubectl: its 401 is read as a real
server's ("You must be logged in to the server (Unauthorized)"), and it is off by default.

kubectl sends no credentials at all to a plain-http server (clientcmd applies the user entry
only over TLS), so with a token check on, every kubectl request here is refused: the right
token's acceptance is proven by the ``kubernetes`` client tests (tests/sources/
test_credentials.py), which do send it.
"""

from __future__ import annotations

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import Kubectl, node

pytestmark = pytest.mark.kubectl


def test_kubectl_reads_the_401_as_unauthorized(api_only: EmulatedCluster,
                                               kubectl: Kubectl) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    assert kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/gpu-1"]
    api_only.set_tokens(frozenset({"right-token"}))
    refused = kubectl("get", "nodes", check=False)
    assert refused.returncode != 0
    assert "Unauthorized" in refused.stderr or "provide credentials" in refused.stderr
    api_only.set_tokens(None)  # back to accepting any request
    assert kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/gpu-1"]
