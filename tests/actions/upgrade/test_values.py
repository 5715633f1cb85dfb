"""The value rules the upgrade actions check before planning (pure, no cluster)."""

from __future__ import annotations

import pytest

from gputui.actions import upgrade_values as V
from gputui.actions.canary_watch import runs_version


@pytest.mark.parametrize(("text", "sent"), [("0", 0), ("3", 3), ("25%", "25%"), ("100%", "100%"),
                                            (" 7% ", "7%"), ("007%", "7%")])
def test_max_unavailable_is_an_int_or_an_integer_percentage(text: str, sent: object) -> None:
    assert V.parse_max_unavailable(text) == sent


@pytest.mark.parametrize("text", ["2.5%", "101%", "-1", "25 %", "%", "two", ""])
def test_max_unavailable_refuses_what_intstr_cannot_scale(text: str) -> None:
    assert V.parse_max_unavailable(text) is None and V.check_max_unavailable(text)


@pytest.mark.parametrize("selector", ["", "app=trainer", "app==trainer,tier!=batch",
                                      "env in (a, b)", "env notin (a)", "!legacy", "gpu",
                                      "nvidia.com/gpu-driver-upgrade-drain.skip!=true"])
def test_valid_selectors(selector: str) -> None:
    assert V.check_selector(selector) is None


@pytest.mark.parametrize("selector", ["app trainer", "app=a b", "-bad=1", "a=b=c",
                                      "env in (a b)"])
def test_invalid_selectors_say_which_part(selector: str) -> None:
    error = V.check_selector(selector)
    assert error is not None and "is not a valid label" in error


@pytest.mark.parametrize(("text", "ok"), [("580.82.07", True), ("570", True),
                                          ("sha256:" + "a" * 64, True), ("580 82", False),
                                          ("", False), ("v:1", False)])
def test_driver_versions_are_tags_or_digests(text: str, ok: bool) -> None:
    assert (V.check_version(text) is None) is ok


def test_a_driver_pod_runs_the_version_its_image_is_tagged_with() -> None:
    def pod(image: str) -> dict[str, object]:
        return {"spec": {"containers": [{"name": "nvidia-driver-ctr", "image": image}]}}
    assert runs_version(pod("nvcr.io/nvidia/driver:580.82.07-ubuntu22.04"), "580.82.07")
    assert runs_version(pod("nvcr.io/nvidia/driver:580.82.07"), "580.82.07")
    assert not runs_version(pod("nvcr.io/nvidia/driver:580.82.070-ubuntu22.04"), "580.82.07")
    assert not runs_version(pod("nvcr.io/nvidia/driver:570.172.08-ubuntu22.04"), "580.82.07")
    assert not runs_version(pod("registry:5000/driver"), "5000")
    digest = "sha256:" + "b" * 64
    assert runs_version(pod(f"nvcr.io/nvidia/driver@{digest}"), digest)
