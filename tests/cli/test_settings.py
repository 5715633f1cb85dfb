"""Settings precedence (file < GPUTUI_* environment < flags) and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.settings import Settings, SettingsError, load_settings


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("refresh: 5\nread_only: true\ntheme: nord\n"
                      "thresholds: {upgrade-stalled-minutes: 45}\nkeymap: {cordon: C}\n")
    settings = load_settings(config, environ={"GPUTUI_REFRESH": "3", "GPUTUI_SPEED": "10"},
                             flags={"refresh": 1.5, "context": None})
    assert settings.refresh == 1.5                      # flag beats environment and file
    assert settings.speed == 10.0                       # environment beats default
    assert settings.read_only is True and settings.theme == "nord"   # from the file
    assert settings.thresholds.upgrade_stalled_minutes == 45.0
    assert settings.keymap == {"cordon": "C"}
    assert settings.context is None                     # an unset flag changes nothing


def test_defaults_without_file_or_environment(tmp_path: Path) -> None:
    settings = load_settings(None, environ={"XDG_CONFIG_HOME": str(tmp_path)}, flags={})
    assert settings == Settings(audit_log=settings.audit_log)


@pytest.mark.parametrize("environ, message", [
    ({"GPUTUI_COLOUR": "x"}, "unknown setting 'colour'"),
    ({"GPUTUI_REFRESH": "soon"}, "invalid value 'soon'"),
    ({"GPUTUI_READ_ONLY": "maybe"}, "invalid value 'maybe'"),
    ({"GPUTUI_SPEED": "-1"}, "speed must be positive"),
])
def test_bad_environment_is_one_line(environ: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as error:
        load_settings(None, environ=environ, flags={})
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_config_file_is_named(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("refresh: [1\n")
    with pytest.raises(SettingsError) as error:
        load_settings(config, environ={}, flags={})
    assert str(config) in str(error.value)
    with pytest.raises(SettingsError, match="config file not found"):
        load_settings(tmp_path / "missing.yaml", environ={}, flags={})


def test_grace_periods_can_be_overridden_and_feed_the_findings(tmp_path: Path) -> None:
    """The defaults live in gputui/domain/thresholds.py; a slow driver build can be given
    more time from the config file, and the rest keep the domain's upstream-derived values."""
    from gputui.domain.thresholds import DEFAULT_THRESHOLDS

    config = tmp_path / "config.yaml"
    config.write_text("thresholds: {driver_startup_minutes: 40}\n")
    settings = load_settings(config, environ={}, flags={})
    assert settings.thresholds.driver_startup_minutes == 40.0
    assert settings.thresholds.node_not_ready_minutes == DEFAULT_THRESHOLDS.node_not_ready_minutes
    with pytest.raises(SettingsError, match="unknown threshold"):
        bad = tmp_path / "bad.yaml"
        bad.write_text("thresholds: {driver_minutes: 40}\n")
        load_settings(bad, environ={}, flags={})


def test_time_to_gpu_settings_at_the_top_level(tmp_path: Path) -> None:
    """``pool_label`` and the join settings read at the top level (file and environment)
    and reach the domain through the thresholds; a bad value is one line."""
    config = tmp_path / "config.yaml"
    config.write_text("pool_label: example.com/gpu-pool\njoin_window_days: 3\n"
                      "thresholds: {slow-join-minutes: 20}\n")
    settings = load_settings(config, environ={"GPUTUI_SLOW_JOIN_MIN_JOINS": "8"}, flags={})
    t = settings.thresholds
    assert (t.pool_label, t.join_window_days, t.slow_join_minutes, t.slow_join_min_joins) == (
        "example.com/gpu-pool", 3.0, 20.0, 8)
    with pytest.raises(SettingsError) as error:
        load_settings(None, environ={"GPUTUI_JOIN_WINDOW_DAYS": "a week"}, flags={})
    assert "invalid value 'a week'" in str(error.value)


def test_the_pool_label_setting_names_the_pool() -> None:
    from gputui.domain.nodes import pool_of

    labels = {"cloud.google.com/gke-nodepool": "gke-pool", "example.com/gpu-pool": "mine"}
    assert pool_of(labels) == "gke-pool"
    assert pool_of(labels, "example.com/gpu-pool") == "mine"
    assert pool_of({"eks.amazonaws.com/nodegroup": "ng"}, "example.com/gpu-pool") == "ng"
    assert pool_of({"kubernetes.azure.com/agentpool": "ak"}) == "ak"
    assert pool_of({"karpenter.sh/nodepool": "kp"}) == "kp"


def test_gpu_health_thresholds_are_settings_and_validated(tmp_path: Path) -> None:
    """The health thresholds come from the config file like every grace; a value that would
    silence or break a rule (negative, a zero window, a share above 1) is one line."""
    config = tmp_path / "config.yaml"
    config.write_text("thresholds: {pcie_replays_per_minute: 20, health_window_minutes: 15}\n")
    settings = load_settings(config, environ={}, flags={})
    assert settings.thresholds.pcie_replays_per_minute == 20.0
    assert settings.thresholds.health_window_minutes == 15.0
    for bad, said in (("throttle_fraction: 2", "at most 1"),
                      ("health_window_minutes: 0", "above 0"),
                      ("pcie_replays_per_minute: -5", ">= 0")):
        config.write_text(f"thresholds: {{{bad}}}\n")
        with pytest.raises(SettingsError, match=said):
            load_settings(config, environ={}, flags={})


def test_each_setting_is_decoded_to_its_own_type(tmp_path: Path) -> None:
    """The type comes from the field, not from searching its annotation's text: a count is
    an int, a yes/no word is a bool, a list in a variable is comma-separated, and a number
    where text is meant is that text."""
    config = tmp_path / "config.yaml"
    config.write_text("theme: 2024\nread_only_contexts: [prod-*, ' ', stage]\n"
                      "keymap: {cordon: 1}\nthresholds: {slow_join_min_joins: 8.0}\n")
    settings = load_settings(config, environ={"GPUTUI_READ_ONLY": "Yes",
                                              "GPUTUI_PROMETHEUS_INSECURE": "off",
                                              "GPUTUI_REFRESH": "3"}, flags={})
    assert settings.theme == "2024"
    assert settings.read_only_contexts == ("prod-*", "stage")
    assert settings.keymap == {"cordon": "1"}
    assert settings.read_only is True and settings.prometheus_insecure is False
    assert settings.refresh == 3.0 and isinstance(settings.refresh, float)
    joins = settings.thresholds.slow_join_min_joins
    assert joins == 8 and isinstance(joins, int)
    settings = load_settings(None, environ={"GPUTUI_READ_ONLY_CONTEXTS": "a, b,,c",
                                            "GPUTUI_SLOW_JOIN_MIN_JOINS": "3"}, flags={})
    assert settings.read_only_contexts == ("a", "b", "c")
    assert type(settings.thresholds.slow_join_min_joins) is int


@pytest.mark.parametrize("environ, message", [
    ({"GPUTUI_SLOW_JOIN_MIN_JOINS": "2.5"}, "setting 'slow_join_min_joins': invalid value '2.5'"),
    ({"GPUTUI_SLOW_JOIN_MIN_JOINS": "-1"}, "must be a finite number >= 0"),
])
def test_a_count_is_a_whole_number(environ: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as error:
        load_settings(None, environ=environ, flags={})
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_value_of_the_wrong_shape_in_the_file_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    for text, said in (("refresh: [1]\n", "setting 'refresh': invalid value [1]"),
                       ("keymap: [cordon]\n", "setting 'keymap'"),
                       ("read_only_contexts: [{a: 1}]\n", "setting 'read_only_contexts'"),
                       ("thresholds: {slow-join-minutes: soon}\n",
                        "setting 'slow-join-minutes': invalid value 'soon'")):
        config.write_text(text)
        with pytest.raises(SettingsError) as error:
            load_settings(config, environ={}, flags={})
        assert said in str(error.value) and "\n" not in str(error.value)


def test_a_recorded_count_reads_back_as_an_int() -> None:
    """A recording made while counts were floats says ``5.0``: it is the count 5; a part
    of one is left out like any unusable value."""
    from gputui.domain.thresholds import DEFAULT_THRESHOLDS, thresholds_from_json

    read = thresholds_from_json({"slow_join_min_joins": 7.0}, DEFAULT_THRESHOLDS)
    assert read.slow_join_min_joins == 7 and type(read.slow_join_min_joins) is int
    assert thresholds_from_json({"slow_join_min_joins": 7.5}, DEFAULT_THRESHOLDS) == \
        DEFAULT_THRESHOLDS
