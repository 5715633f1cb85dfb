"""Denied verbs for drills and tests: what RBAC would refuse to the emulated operator.

By default the emulated cluster's operator may do everything. ``gputui sim --deny SPEC``
(or ``EmulatedCluster(deny=SPEC)``) refuses chosen verbs on chosen resources, the way a
real cluster's RBAC does in both places an operator meets it:

* a request for a denied verb answers 403 ``Forbidden`` with the real server's message;
* a SelfSubjectAccessReview for it answers ``allowed: false`` with a reason.

SPEC is comma-separated ``VERB:RESOURCE`` entries: ``RESOURCE`` is the plural, optionally
with ``/subresource`` and ``.group`` (``patch:nodes``, ``create:pods/eviction``,
``patch:clusterpolicies.nvidia.com``); ``*`` matches any verb or resource
(``*:nodes``). Verbs are Kubernetes', not HTTP's: ``get list watch create update patch
delete deletecollection``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gputui.sim.errors import ApiError

USER = "operator"
VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete",
                   "deletecollection", "*"})


@dataclass(frozen=True)
class Rule:
    """One denied ``verb`` on ``resource[/subresource][.group]``."""

    verb: str
    resource: str
    subresource: str = ""
    group: str = ""

    def matches(self, verb: str, resource: str, subresource: str, group: str) -> bool:
        return (self.verb in ("*", verb) and self.resource in ("*", resource)
                and self.subresource == subresource
                and (self.group == group or self.resource == "*"))


def parse_deny(spec: str | None) -> tuple[Rule, ...]:
    """Parse a ``--deny`` SPEC; a malformed entry raises ValueError with one line."""
    rules: list[Rule] = []
    for entry in (spec or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        verb, sep, name = entry.partition(":")
        if not sep or not name or verb not in VERBS:
            raise ValueError(f"--deny entry {entry!r}: expected VERB:RESOURCE with VERB one "
                             f"of {', '.join(sorted(VERBS - {'*'}))} or *")
        path, _, group = name.partition(".")
        resource, _, subresource = path.partition("/")
        rules.append(Rule(verb, resource, subresource, group))
    return tuple(rules)


@dataclass
class Denials:
    """The rules in force; tests may replace ``rules`` while the server runs."""

    rules: tuple[Rule, ...] = field(default_factory=tuple)

    def denied(self, verb: str, resource: str, subresource: str = "", group: str = "") -> bool:
        return any(rule.matches(verb, resource, subresource, group) for rule in self.rules)

    def check(self, verb: str, resource: str, subresource: str, group: str,
              name: str | None, namespace: str | None) -> None:
        """Raise the API server's 403 when the request is denied."""
        if not self.denied(verb, resource, subresource, group):
            return
        raise ApiError(403, "Forbidden", forbidden_message(
            verb, resource, subresource, group, name, namespace),
            forbidden_details(resource, group, name))


def forbidden_details(resource: str, group: str, name: str | None) -> dict[str, object]:
    """``details`` of the Status, as kube-apiserver fills it (``errors.NewForbidden``: the
    group and the resource as ``kind``, the name for a single object; empty ones left out)."""
    details: dict[str, object] = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return details


def forbidden_message(verb: str, resource: str, subresource: str, group: str,
                      name: str | None, namespace: str | None) -> str:
    """The real API server's wording for an RBAC refusal."""
    what = f'{resource} "{name}"' if name else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    res = resource + (f"/{subresource}" if subresource else "")
    return (f'{what} is forbidden: User "{USER}" cannot {verb} resource "{res}" in API group '
            f'"{group}" {scope}')


def review_status(denials: Denials, attributes: dict[str, object]) -> dict[str, object]:
    """The ``status`` of a SelfSubjectAccessReview for ``resourceAttributes``."""
    verb = str(attributes.get("verb") or "")
    resource = str(attributes.get("resource") or "")
    subresource = str(attributes.get("subresource") or "")
    group = str(attributes.get("group") or "")
    if denials.denied(verb, resource, subresource, group):
        res = resource + (f"/{subresource}" if subresource else "")
        return {"allowed": False, "denied": True,
                "reason": f"gputui sim --deny refuses {verb} {res}"
                          + (f" in group {group}" if group else "")}
    return {"allowed": True, "reason": "gputui emulated cluster allows everything else"}
