"""Watch-list (streaming lists): ``sendInitialEvents`` and ``resourceVersionMatch`` on a watch.

client-go 1.35 (so kubectl 1.35's ``wait``) opens its informers with
``watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true``
and waits for a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` before it trusts the
stream. The emulated server reports 1.34, where the WatchList feature is on by default, so it
streams: every current object as ADDED, then that bookmark at the list's resourceVersion, then
changes as on any watch. The options are checked as 1.34 checks them (422 ``Invalid`` on
``ListOptions.meta.k8s.io``), including on plain lists, which refuse ``sendInitialEvents``.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from gputui.sim.errors import ApiError

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
NOT_OLDER_THAN = "NotOlderThan"
_MATCHES = ("Exact", NOT_OLDER_THAN)


@dataclass(frozen=True)
class WatchListOptions:
    """What a watch asked for about its initial state.

    ``send_initial`` is ``None`` when the request did not say (the legacy rules then apply:
    no resourceVersion or ``0`` means the current objects come first as ADDED).
    """

    send_initial: bool | None
    match: str

    @property
    def streams_list(self) -> bool:
        """A watch-list: initial ADDED events closed by the annotated bookmark."""
        return self.send_initial is True


def _flag(request: web.Request, name: str) -> bool | None:
    raw = request.query.get(name)
    if raw is None:
        return None
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0", ""):
        return False
    raise _invalid([(name, "Invalid value", f'"{raw}": must be a boolean')])


def _invalid(causes: list[tuple[str, str, str]]) -> ApiError:
    """The 422 a real server answers for bad list options: one cause per problem."""
    parts = [f"{field}: {kind}: {detail}" for field, kind, detail in causes]
    message = 'ListOptions.meta.k8s.io "" is invalid: ' + (
        parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]")
    reasons = {"Forbidden": "FieldValueForbidden", "Unsupported value": "FieldValueNotSupported",
               "Invalid value": "FieldValueInvalid"}
    return ApiError(422, "Invalid", message, {
        "group": "meta.k8s.io", "kind": "ListOptions",
        "causes": [{"reason": reasons[kind], "message": f"{kind}: {detail}", "field": field}
                   for field, kind, detail in causes]})


def watch_options(request: web.Request) -> WatchListOptions:
    """The watch's initial-state options, checked as kube-apiserver 1.34 checks them."""
    send = _flag(request, "sendInitialEvents")
    match = request.query.get("resourceVersionMatch", "")
    causes: list[tuple[str, str, str]] = []
    if send is not None and match != NOT_OLDER_THAN:
        causes.append(("resourceVersionMatch", "Forbidden",
                       (f"sendInitialEvents requires setting resourceVersionMatch to "
                       f"{NOT_OLDER_THAN}")))
    if match:
        if send is None:
            causes.append(("resourceVersionMatch", "Forbidden", ("resourceVersionMatch is "
                           "forbidden for watch unless sendInitialEvents is provided")))
        if match != NOT_OLDER_THAN:
            causes.append(("resourceVersionMatch", "Unsupported value",
                           f'"{match}": supported values: "{NOT_OLDER_THAN}"'))
        if request.query.get("continue"):
            causes.append(("resourceVersionMatch", "Forbidden",
                           "resourceVersionMatch is forbidden when continue is provided"))
    if causes:
        raise _invalid(causes)
    return WatchListOptions(send, match)


def check_list_options(request: web.Request) -> None:
    """A plain list refuses ``sendInitialEvents`` and unknown ``resourceVersionMatch`` values."""
    causes: list[tuple[str, str, str]] = []
    match = request.query.get("resourceVersionMatch", "")
    if match and match not in _MATCHES:
        causes.append(("resourceVersionMatch", "Unsupported value",
                       f'"{match}": supported values: "Exact", "{NOT_OLDER_THAN}"'))
    if request.query.get("sendInitialEvents") is not None:
        causes.append(("sendInitialEvents", "Forbidden", "sendInitialEvents is forbidden for list"))
    if causes:
        raise _invalid(causes)
