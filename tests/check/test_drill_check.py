"""``gputui check`` on the drills that behave as upstream (issue 19): the real CLI in a
subprocess, the emulated cluster over real HTTP."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess[str]]

SHARING = """summary: a T4 node asks for a device-plugin config its ConfigMap lacks; one joins
namespace: gpu-operator
clusterPolicy:
  spec:
    devicePlugin:
      config: {name: time-slicing-config, default: ""}
devicePluginConfig:
  name: time-slicing-config
  data:
    tesla-t4: |
      version: v1
      sharing:
        timeSlicing:
          resources:
          - name: nvidia.com/gpu
            replicas: 4
nodePools:
  - {name: t4, prefix: gke-prod-t4-pool-91de, count: 1, gpu: T4, gpusPerNode: 4,
     deviceConfig: tesla-t4-typo}
timeline:
  - {at: 10s, action: join, pool: t4, count: 1}
"""


def test_check_reports_a_missing_device_plugin_config(gputui: Run, tmp_path: Path) -> None:
    """k8s-device-plugin ``cmd/config-manager/main.go``: "specified config X does not
    exist" makes the joining node's ``config-manager-init`` crash-loop; ``check`` names the
    label value, the ConfigMap and the keys it has."""
    path = tmp_path / "sharing-missing.yaml"
    path.write_text(SHARING)
    result = gputui("check", "--json", "--demo", "--scenario", str(path), timeout=180)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    missing = [f for f in report["findings"] if f["code"] == "sharing-config-missing"]
    assert len(missing) == 2 and {f["severity"] for f in missing} == {"warning"}
    for finding in missing:
        assert "nvidia.com/device-plugin.config=tesla-t4-typo" in finding["message"]
        assert "time-slicing-config" in finding["message"] and "tesla-t4" in finding["message"]
    failing = [f for f in report["findings"] if f["code"] == "operand-pod-failing"]
    assert any("config-manager-init" in f["message"] for f in failing), report["findings"]
