"""Protobuf schemas of core/v1 Pod, for the pods kubectl 1.35 creates as protobuf.

``kubectl debug node/NAME`` creates its debugging pod with a protobuf body (host namespaces,
the node's root mounted from a hostPath, a toleration of everything). The fields below are
the ones such pods carry, numbered as in core/v1's ``generated.proto``; a pod using any other
field with a value is refused with 415 by :mod:`gputui.sim.apiserver.kubeproto` rather than
stored without it.
"""

from __future__ import annotations

# Same field-type vocabulary as kubeproto.MESSAGES; "inline:X" merges message X into the
# parent, as Go's ``json:",inline"`` does (a Volume's source sits beside its name in JSON).
POD_MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "Pod": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec"), 3: ("status", "PodStatus")},
    "PodSpec": {
        1: ("volumes", "[]Volume"), 2: ("containers", "[]Container"),
        3: ("restartPolicy", "string"), 4: ("terminationGracePeriodSeconds", "int*"),
        5: ("activeDeadlineSeconds", "int*"), 6: ("dnsPolicy", "string"),
        7: ("nodeSelector", "map"), 8: ("serviceAccountName", "string"),
        9: ("serviceAccount", "string"), 10: ("nodeName", "string"),
        11: ("hostNetwork", "bool"), 12: ("hostPID", "bool"), 13: ("hostIPC", "bool"),
        16: ("hostname", "string"), 17: ("subdomain", "string"),
        19: ("schedulerName", "string"), 20: ("initContainers", "[]Container"),
        21: ("automountServiceAccountToken", "bool*"), 22: ("tolerations", "[]Toleration"),
        24: ("priorityClassName", "string"), 25: ("priority", "int*"),
    },
    "Container": {
        1: ("name", "string"), 2: ("image", "string"), 3: ("command", "[]string"),
        4: ("args", "[]string"), 5: ("workingDir", "string"), 7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"), 9: ("volumeMounts", "[]VolumeMount"),
        13: ("terminationMessagePath", "string"), 14: ("imagePullPolicy", "string"),
        16: ("stdin", "bool"), 17: ("stdinOnce", "bool"), 18: ("tty", "bool"),
        20: ("terminationMessagePolicy", "string"),
    },
    "EnvVar": {1: ("name", "string"), 2: ("value", "string")},
    "ResourceRequirements": {1: ("limits", "quantitymap"), 2: ("requests", "quantitymap")},
    "VolumeMount": {
        1: ("name", "string"), 2: ("readOnly", "bool"), 3: ("mountPath", "string"),
        4: ("subPath", "string"), 5: ("mountPropagation", "string"),
        6: ("subPathExpr", "string"),
    },
    "Volume": {1: ("name", "string"), 2: ("", "inline:VolumeSource")},
    "VolumeSource": {1: ("hostPath", "HostPathVolumeSource"),
                     2: ("emptyDir", "EmptyDirVolumeSource")},
    "HostPathVolumeSource": {1: ("path", "string"), 2: ("type", "string")},
    "EmptyDirVolumeSource": {1: ("medium", "string"), 2: ("sizeLimit", "Quantity")},
    "Toleration": {1: ("key", "string"), 2: ("operator", "string"), 3: ("value", "string"),
                   4: ("effect", "string"), 5: ("tolerationSeconds", "int*")},
    "PodStatus": {1: ("phase", "string")},
}
