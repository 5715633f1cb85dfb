"""``JsonDict``, the one name for a Kubernetes object as decoded JSON.

A leaf module (it imports nothing from gputui), so that :mod:`gputui.domain.kube` and
:mod:`gputui.domain.pods`, which read such objects, need not import
:mod:`gputui.domain.inputs`, which names what they read (``PodInfo``): that was an import
circle. :mod:`gputui.domain.inputs` re-exports it under its usual name.
"""

from __future__ import annotations

from typing import Any

#: One Kubernetes object as decoded JSON.
JsonDict = dict[str, Any]
