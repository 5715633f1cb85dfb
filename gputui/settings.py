"""gputui's settings: one frozen, typed object built before the app starts.

Precedence, lowest first: built-in defaults, the config file
(``$XDG_CONFIG_HOME/gputui/config.yaml`` or ``--config``), ``GPUTUI_*`` environment
variables, then command-line flags. The app, the sources and ``gputui check`` receive a
:class:`Settings` and read no environment themselves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_type_hints

import msgspec.inspect
import yaml

from gputui.domain.thresholds import DomainThresholds, threshold_problem


class SettingsError(ValueError):
    """A bad config file or value; the message is one line meant for the operator."""


Thresholds = DomainThresholds
"""How long a state may last before it becomes a finding (minutes, emulated or real).

The fields and their defaults live in :mod:`gputui.domain.thresholds`, each derived from an
upstream timeout or probe; settings only let a user override them (``thresholds:`` in the
config file, e.g. ``driver_startup_minutes: 30`` for slow driver builds).
"""


@dataclass(frozen=True)
class Settings:
    """Everything gputui needs to know before it starts; every field is documented."""

    #: kubeconfig file(s); ``None`` means ``$KUBECONFIG`` or ``~/.kube/config`` or in-cluster
    kubeconfig: str | None = None
    #: kubeconfig context; ``None`` means the current context
    context: str | None = None
    #: GPU Operator namespace; ``None`` means discover it
    namespace: str | None = None
    #: Prometheus base URL for DCGM metrics; ``None`` means find it or scrape exporters
    prometheus_url: str | None = None
    #: bearer token sent to Prometheus (``Authorization: Bearer``); config file or environment
    prometheus_token: str | None = None
    #: basic-auth user for Prometheus (with ``prometheus_password``)
    prometheus_username: str | None = None
    #: basic-auth password for Prometheus
    prometheus_password: str | None = None
    #: extra HTTP headers sent to Prometheus (e.g. ``X-Scope-OrgID`` for Mimir/Thanos)
    prometheus_headers: Mapping[str, str] = field(default_factory=dict)
    #: CA bundle (PEM) to verify Prometheus' TLS certificate with
    prometheus_ca_cert: str | None = None
    #: client certificate (PEM) for mutual TLS with Prometheus
    prometheus_client_cert: str | None = None
    #: the client certificate's key (PEM)
    prometheus_client_key: str | None = None
    #: do not verify Prometheus' TLS certificate (self-signed lab setups only)
    prometheus_insecure: bool = False
    #: read this machine's GPUs through NVML instead of the cluster's metrics
    local: bool = False
    #: hide and refuse every action that changes the cluster
    read_only: bool = False
    #: context name globs (``prod-*``) that are read-only as if ``--read-only`` were given
    read_only_contexts: tuple[str, ...] = ()
    #: where applied actions are appended, one JSON line each
    audit_log: str = field(default_factory=lambda: str(_state_dir() / "audit.jsonl"))
    #: seconds between metric refreshes (the cluster itself streams through watches)
    refresh: float = 2.0
    #: run on the emulated cluster instead of a real one
    demo: bool = False
    #: emulated scenario name (with ``demo``)
    scenario: str = "healthy"
    #: emulated clock speed (with ``demo``)
    speed: float = 1.0
    #: how the handoff summary is handed over: ``osc52`` (the terminal's clipboard) or
    #: ``file`` (a private file next to the audit log)
    clipboard: str = "osc52"
    #: Textual theme name
    theme: str = "gputui"
    #: key remaps: binding id -> key(s), e.g. ``{"cordon": "C"}``
    keymap: Mapping[str, str] = field(default_factory=dict)
    #: finding thresholds
    thresholds: Thresholds = field(default_factory=Thresholds)
    #: debug log (requests, retries, fallbacks, errors; never a credential); None: no log
    log_file: str | None = None
    #: record every TUI session into this directory (``<context>-<UTC time>.gputui-rec``,
    #: created 0700); None: no recording unless ``--record FILE``
    record: str | None = None
    #: the file ``--record FILE`` records this session to (wins over ``record``)
    record_file: str | None = None


#: settings read at the top level of the config (and ``GPUTUI_POOL_LABEL``...) that live in
#: :class:`Thresholds` because the snapshot builder reads them there (see "Time to GPU" in
#: the README):
#:
#: ``pool_label``: a node label naming the node's pool, tried before GKE's
#: ``cloud.google.com/gke-nodepool``, EKS's ``eks.amazonaws.com/nodegroup``, Karpenter's
#: ``karpenter.sh/nodepool`` and AKS's ``kubernetes.azure.com/agentpool``;
#: ``join_window_days`` (7): the window of joins the per-pool figures are taken over;
#: ``slow_join_minutes`` (15): ``slow-gpu-join`` past this while a pool has fewer than
#: ``slow_join_min_joins`` (5) timed joins (its own p90 x 2 otherwise).
JOIN_SETTINGS = frozenset({"pool_label", "join_window_days", "slow_join_minutes",
                           "slow_join_min_joins"})


def _state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gputui"


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gputui" / "config.yaml"


#: each field's type (the annotations are text under ``from __future__ import annotations``;
#: these are the resolved types) and msgspec's description of it
_Field = tuple[Any, msgspec.inspect.Type]


def _fields_of(cls: type) -> dict[str, _Field]:
    return {name: (kind, msgspec.inspect.type_info(kind))
            for name, kind in get_type_hints(cls).items()}


_SETTING_FIELDS = _fields_of(Settings)
_THRESHOLD_FIELDS = _fields_of(Thresholds)

#: the words a yes/no setting may be written with (``GPUTUI_READ_ONLY=yes``); msgspec alone
#: reads ``true``/``false``/``1``/``0``
_BOOL_WORDS: Mapping[str, bool] = {"1": True, "true": True, "yes": True, "on": True,
                                   "0": False, "false": False, "no": False, "off": False,
                                   "": False}


def _decode(name: str, value: Any, typed: _Field) -> Any:
    """``value`` as the field ``name``, of the type ``typed`` says.

    msgspec converts (``"3"`` to 3.0 for a float, ``"8"`` to 8 for an int, a list to a
    tuple); :func:`_written_form` first reads the forms a person writes that msgspec would
    not: yes/no words, comma-separated lists in a variable, a number where text is meant.
    """
    kind, info = typed
    try:
        return msgspec.convert(_written_form(value, info), type=kind, strict=False)
    except msgspec.ValidationError:
        raise SettingsError(f"setting {name!r}: invalid value {value!r}") from None


def _written_form(value: Any, info: msgspec.inspect.Type) -> Any:
    """``value`` in the form msgspec reads for a field of type ``info``."""
    if isinstance(info, msgspec.inspect.UnionType) and value is not None:  # ``str | None``
        info = next(t for t in info.types if not isinstance(t, msgspec.inspect.NoneType))
    if isinstance(info, msgspec.inspect.BoolType) and isinstance(value, str):
        return _BOOL_WORDS.get(value.strip().lower(), value)
    if isinstance(info, msgspec.inspect.StrType) and _scalar(value):
        return str(value)  # ``theme: 2024`` in YAML is the text "2024"
    if isinstance(info, msgspec.inspect.VarTupleType):
        # a YAML list, or comma-separated in GPUTUI_* variables; blanks are dropped
        items = value.split(",") if isinstance(value, str) else value
        if isinstance(items, list | tuple) and all(map(_scalar, items)):
            return [text for text in (str(item).strip() for item in items) if text]
    if isinstance(info, msgspec.inspect.DictType) and isinstance(value, Mapping):
        return {str(key): str(item) if _scalar(item) else item for key, item in value.items()}
    return value


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _apply(base: Settings, values: Mapping[str, Any], origin: str) -> Settings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name == "thresholds":
            if not isinstance(value, Mapping):
                raise SettingsError(f"{origin}: 'thresholds' must be a mapping")
            bad = [k for k in value if k.replace("-", "_") not in _THRESHOLD_FIELDS]
            if bad:
                raise SettingsError(f"{origin}: unknown threshold {bad[0]!r}")
            changes["thresholds"] = replace(
                changes.get("thresholds", base.thresholds),
                **{k.replace("-", "_"): _threshold(k, v) for k, v in value.items()})
            continue
        if name in JOIN_SETTINGS:  # top-level names for the time-to-GPU settings
            changes["thresholds"] = replace(
                changes.get("thresholds", base.thresholds),
                **{name: _threshold(name, value)})
            continue
        if name not in _SETTING_FIELDS:
            raise SettingsError(f"{origin}: unknown setting {key!r}")
        changes[name] = _decode(name, value, _SETTING_FIELDS[name])
    return replace(base, **changes)


def _threshold(key: str, value: Any) -> Any:
    """``value`` as the threshold ``key`` (written with - or _) names."""
    name = key.replace("-", "_")
    return _decode(key, value, _THRESHOLD_FIELDS[name])


def load_settings(config_path: str | Path | None = None,
                  environ: Mapping[str, str] | None = None,
                  flags: Mapping[str, Any] | None = None) -> Settings:
    """Build settings from file, environment and flags (``None`` flag values are unset).

    Raises:
        SettingsError: with one line naming the bad file, key or value.
    """
    settings = Settings()
    path = Path(config_path) if config_path else default_config_path()
    if path.exists():
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as error:
            raise SettingsError(f"cannot read config {path}: {str(error).splitlines()[0]}") from None
        if not isinstance(data, Mapping):
            raise SettingsError(f"config {path}: expected a mapping at the top level")
        settings = _apply(settings, data, str(path))
    elif config_path:
        raise SettingsError(f"config file not found: {path}")
    env = os.environ if environ is None else environ
    from_env = {key[len("GPUTUI_"):].lower(): value for key, value in env.items()
                if key.startswith("GPUTUI_") and key != "GPUTUI_CONFIG"}
    if from_env:
        settings = _apply(settings, from_env, "environment")
    if flags:
        settings = _apply(settings, {k: v for k, v in flags.items() if v is not None}, "flags")
    if settings.speed <= 0:
        raise SettingsError("speed must be positive")
    if settings.refresh <= 0:
        raise SettingsError("refresh must be positive")
    problem = threshold_problem(settings.thresholds)
    if problem:
        raise SettingsError(problem)
    return settings
