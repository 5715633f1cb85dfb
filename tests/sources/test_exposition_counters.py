"""dcgm-exporter's counters are read under the names it writes (``etc/default-counters.csv``
declares ``DCGM_FI_DEV_PCIE_REPLAY_COUNTER`` and the NVLink ``..._COUNT_TOTAL`` counters
without a lowercase ``_total``); ``prometheus_client``'s parser would rename their samples
``..._total`` and a reader asking for the exporter's name would find nothing."""

from __future__ import annotations

from gputui.sources.exposition import parse_samples

TEXT = """# HELP DCGM_FI_DEV_PCIE_REPLAY_COUNTER Total number of PCIe retries.
# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter
DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu="0",UUID="GPU-1"} 4200
# TYPE DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL counter
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu="0",UUID="GPU-1"} 42
# TYPE requests_total counter
requests_total{code="200"} 7
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} 92
"""


def test_counters_keep_the_names_the_exporter_wrote() -> None:
    wanted = ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
              "requests_total", "DCGM_FI_DEV_GPU_TEMP")
    found = {s.name: s.value for s in parse_samples(TEXT, wanted)}
    assert found == {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 4200.0,
                     "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": 42.0,
                     "requests_total": 7.0, "DCGM_FI_DEV_GPU_TEMP": 92.0}
