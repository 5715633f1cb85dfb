"""Denied verbs for drills and tests: what RBAC would refuse to the emulated operator.

By default the emulated cluster's operator may do everything. ``gputui sim --deny SPEC``
(or ``EmulatedCluster(deny=SPEC)``) refuses chosen verbs on chosen resources, the way a
real cluster's RBAC does in both places an operator meets it:

* a request for a denied verb answers 403 ``Forbidden`` with the real server's message;
* a SelfSubjectAccessReview for it answers ``allowed: false`` with a reason.

Who the caller is (``kubectl auth whoami``, a SelfSubjectReview, and the ``User "..."`` of
every 403) is the :class:`Identity` in force: ``operator`` in group ``system:authenticated``
unless ``gputui sim --identity NAME --groups G1,G2`` (or ``EmulatedCluster(identity=...)``)
says otherwise.

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
#: the uid a real authenticator would give; fixed so that answers are reproducible
USER_UID = "5f0e4c7a-2d3b-4e8f-9a1c-6b7d8e9f0a1b"
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


@dataclass(frozen=True)
class Identity:
    """Who the emulated server takes every caller to be (one user: any token is accepted)."""

    username: str = USER
    groups: tuple[str, ...] = ("system:authenticated",)
    uid: str = USER_UID

    def user_info(self) -> dict[str, object]:
        """``status.userInfo`` of a SelfSubjectReview."""
        return {"username": self.username, "uid": self.uid, "groups": list(self.groups)}


def parse_identity(username: str | None, groups: str | None = None) -> Identity:
    """``--identity NAME`` and ``--groups G1,G2``; an empty name raises ValueError."""
    if username is not None and not username.strip():
        raise ValueError("--identity: a user name is needed")
    names = tuple(g.strip() for g in (groups or "").split(",") if g.strip())
    return Identity(username.strip() if username else USER,
                    names or Identity().groups)


@dataclass
class Denials:
    """The rules in force, and who they are told to; tests may replace both while the
    server runs."""

    rules: tuple[Rule, ...] = field(default_factory=tuple)
    identity: Identity = field(default_factory=Identity)

    def denied(self, verb: str, resource: str, subresource: str = "", group: str = "") -> bool:
        return any(rule.matches(verb, resource, subresource, group) for rule in self.rules)

    def check(self, verb: str, resource: str, subresource: str, group: str,
              name: str | None, namespace: str | None) -> None:
        """Raise the API server's 403 when the request is denied."""
        if not self.denied(verb, resource, subresource, group):
            return
        raise ApiError(403, "Forbidden", forbidden_message(
            verb, resource, subresource, group, name, namespace, self.identity.username),
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
                      name: str | None, namespace: str | None, user: str = USER) -> str:
    """The real API server's wording for an RBAC refusal."""
    what = f'{resource} "{name}"' if name else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    res = resource + (f"/{subresource}" if subresource else "")
    return (f'{what} is forbidden: User "{user}" cannot {verb} resource "{res}" in API group '
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


def self_subject_review(identity: Identity, body: object) -> dict[str, object]:
    """The answer to a SelfSubjectReview: the request's object with ``status.userInfo``.

    A real server ignores whatever status the client sent and fills in who it
    authenticated; so does this one.
    """
    review = dict(body) if isinstance(body, dict) else {}
    metadata = review.get("metadata")
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {**(metadata if isinstance(metadata, dict) else {}),
                         "creationTimestamp": None},
            "status": {"userInfo": identity.user_info()}}
