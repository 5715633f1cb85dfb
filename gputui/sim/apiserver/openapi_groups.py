"""OpenAPI v3 components for apps/v1, policy/v1, authorization.k8s.io/v1 and
authentication.k8s.io/v1.

DaemonSets (every GPU Operator operand is one), ControllerRevisions (their rollout history),
PodDisruptionBudgets (what blocks a drain), Evictions, SelfSubjectAccessReviews (what
``kubectl auth can-i`` and gputui's permission checks send) and SelfSubjectReviews (``kubectl
auth whoami``; gputui's audit log names the user they return).
"""

from __future__ import annotations

from gputui.sim.apiserver.openapi_core import CORE, META
from gputui.sim.apiserver.openapi_dsl import (
    Schema,
    array,
    boolean,
    int64,
    int_or_string,
    integer,
    item_ref,
    kind_fields,
    obj,
    ref,
    string,
)

APPS = "io.k8s.api.apps.v1."
POLICY = "io.k8s.api.policy.v1."
AUTHZ = "io.k8s.api.authorization.v1."
AUTHN = "io.k8s.api.authentication.v1."

APPS_SCHEMAS: dict[str, Schema] = {
    APPS + "DaemonSet": obj("Runs one copy of a pod on every node its template selects.", {
        **kind_fields("DaemonSet"),
        "spec": ref(APPS + "DaemonSetSpec", "Desired behaviour."),
        "status": ref(APPS + "DaemonSetStatus", "Observed rollout state; read-only."),
    }, gvk=("apps", "v1", "DaemonSet")),
    APPS + "DaemonSetSpec": obj("What the daemonset runs and how it rolls out.", {
        "selector": ref(META + "LabelSelector", "Selects the pods this daemonset owns; must "
                        "match the template's labels."),
        "template": obj("The pod each selected node gets.", {
            "metadata": ref(META + "ObjectMeta", "Labels and annotations of the pods."),
            "spec": ref(CORE + "PodSpec", "The pods' spec; its nodeSelector picks the "
                        "nodes.")}),
        "updateStrategy": obj("How pods are replaced when the template changes.", {
            "type": string("RollingUpdate (default) or OnDelete (the GPU Operator's driver "
                           "daemonset uses OnDelete and upgrades node by node itself).",
                           enum=["OnDelete", "RollingUpdate"]),
            "rollingUpdate": obj("Rolling update limits.", {
                "maxUnavailable": int_or_string("Nodes whose pod may be down at once."),
                "maxSurge": int_or_string("Nodes that may run an old and a new pod at once.")}),
        }),
        "minReadySeconds": integer("Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": integer("Old ControllerRevisions kept for rollback."),
    }, required=["selector", "template"]),
    APPS + "DaemonSetStatus": obj("Rollout counters of a daemonset.", {
        "desiredNumberScheduled": integer("Nodes that should run the pod."),
        "currentNumberScheduled": integer("Nodes running at least one pod of it."),
        "numberReady": integer("Nodes whose pod is ready."),
        "numberAvailable": integer("Nodes whose pod has been ready for minReadySeconds."),
        "numberUnavailable": integer("Nodes that should run a ready pod but do not."),
        "updatedNumberScheduled": integer("Nodes running the current template's pod."),
        "numberMisscheduled": integer("Nodes running the pod that should not."),
        "observedGeneration": int64("Newest generation the controller has acted on."),
    }, required=["currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                 "numberReady"]),
    APPS + "ControllerRevision": obj("An immutable snapshot of a daemonset's pod template "
                                     "(its rollout history).", {
        **kind_fields("ControllerRevision"),
        "data": {"type": "object", "description": "The serialised template state."},
        "revision": int64("Revision number, increasing."),
    }, required=["revision"], gvk=("apps", "v1", "ControllerRevision")),
}

POLICY_SCHEMAS: dict[str, Schema] = {
    POLICY + "PodDisruptionBudget": obj("Limits how many pods of a set voluntary "
                                        "disruptions (drains, evictions) may take down.", {
        **kind_fields("PodDisruptionBudget"),
        "spec": ref(POLICY + "PodDisruptionBudgetSpec", "The budget."),
        "status": ref(POLICY + "PodDisruptionBudgetStatus", "Current accounting; "
                      "read-only."),
    }, gvk=("policy", "v1", "PodDisruptionBudget")),
    POLICY + "PodDisruptionBudgetSpec": obj("Which pods, and how many must stay up.", {
        "selector": ref(META + "LabelSelector", "The pods the budget covers."),
        "minAvailable": int_or_string("Pods (or percent) that must stay available; an "
                                      "eviction that would go below is refused with 429."),
        "maxUnavailable": int_or_string("Pods (or percent) that may be unavailable at once."),
        "unhealthyPodEvictionPolicy": string("IfHealthyBudget or AlwaysAllow: whether pods "
                                             "that are not ready may be evicted regardless.",
                                             enum=["AlwaysAllow", "IfHealthyBudget"]),
    }),
    POLICY + "PodDisruptionBudgetStatus": obj("Accounting of a budget.", {
        "currentHealthy": integer("Healthy pods now."),
        "desiredHealthy": integer("Healthy pods the budget requires."),
        "disruptionsAllowed": integer("Evictions allowed right now."),
        "expectedPods": integer("Pods the budget counts."),
        "observedGeneration": int64("Generation the status was computed for."),
        "conditions": array(item_ref(META + "Condition"), "DisruptionAllowed and friends.",
                            merge_key="type"),
    }, required=["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"]),
    POLICY + "Eviction": obj("A request to evict a pod, honouring disruption budgets; "
                             "POSTed to a pod's eviction subresource (what drains send).", {
        **kind_fields("Eviction"),
        "deleteOptions": {"type": "object", "description": "Options for the deletion the "
                          "eviction performs (grace period, preconditions, dry run)."},
    }, gvk=("policy", "v1", "Eviction")),
}

_RESOURCE_ATTRIBUTES = obj("The resource request to check.", {
    "namespace": string("Namespace of the request; empty means all namespaces for namespaced "
                        "resources."),
    "verb": string("get, list, watch, create, update, patch, delete or *."),
    "group": string("API group; empty for the core group."),
    "version": string("API version."),
    "resource": string("Resource (plural), e.g. nodes."),
    "subresource": string("Subresource, e.g. eviction or status."),
    "name": string("Object name; empty means all."),
})

AUTHZ_SCHEMAS: dict[str, Schema] = {
    AUTHZ + "SelfSubjectAccessReview": obj("Asks whether the caller may perform an action "
                                           "(kubectl auth can-i; gputui checks its actions "
                                           "this way before offering them).", {
        **kind_fields("SelfSubjectAccessReview"),
        "spec": obj("The action to check: resourceAttributes or nonResourceAttributes.", {
            "resourceAttributes": _RESOURCE_ATTRIBUTES,
            "nonResourceAttributes": obj("A non-resource request (a URL path).", {
                "path": string("URL path."), "verb": string("HTTP verb, lower case.")}),
        }),
        "status": obj("The answer, filled in by the server.", {
            "allowed": boolean("True when the action would be allowed."),
            "denied": boolean("True when an authorizer denied it outright."),
            "reason": string("Why it was allowed or denied."),
            "evaluationError": string("An error met while deciding."),
        }, required=["allowed"]),
    }, required=["spec"], gvk=("authorization.k8s.io", "v1", "SelfSubjectAccessReview")),
}

AUTHN_SCHEMAS: dict[str, Schema] = {
    AUTHN + "SelfSubjectReview": obj("Asks who the server takes the caller to be (kubectl "
                                     "auth whoami; gputui's audit log records the answer).", {
        **kind_fields("SelfSubjectReview"),
        "status": obj("The answer, filled in by the server.", {
            "userInfo": ref(AUTHN + "UserInfo", "The user the request authenticated as."),
        }),
    }, gvk=("authentication.k8s.io", "v1", "SelfSubjectReview")),
    AUTHN + "UserInfo": obj("An authenticated user.", {
        "username": string("The name that uniquely identifies this user among all active "
                           "users."),
        "uid": string("A unique value that identifies this user across time."),
        "groups": array(string("A group name."), "The groups this user is a part of."),
        "extra": {"type": "object", "description": "Any additional information provided by "
                  "the authenticator.", "additionalProperties": array(string("A value."),
                                                                      "The values.")},
    }),
}
