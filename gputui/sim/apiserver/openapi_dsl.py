"""Small builders for the OpenAPI v3 schemas the emulated server publishes.

Schemas are plain dicts in the shape kube-apiserver writes: nested built-in types are named
components referenced through ``allOf: [{$ref}]``, custom resources are inline (as a CRD's
``openAPIV3Schema`` is), and each top-level kind carries ``x-kubernetes-group-version-kind``,
which is how ``kubectl explain`` finds the schema of a resource.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
REF_PREFIX = "#/components/schemas/"


def string(description: str, enum: list[str] | None = None, fmt: str | None = None) -> Schema:
    out: Schema = {"type": "string", "description": description}
    if enum:
        out["enum"] = enum
    if fmt:
        out["format"] = fmt
    return out


def integer(description: str) -> Schema:
    return {"type": "integer", "format": "int32", "description": description}


def int64(description: str) -> Schema:
    return {"type": "integer", "format": "int64", "description": description}


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def time(description: str) -> Schema:
    """A ``metav1.Time``: RFC 3339 text in JSON."""
    return {"type": "string", "format": "date-time", "description": description}


def int_or_string(description: str) -> Schema:
    return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"},
                                                          {"type": "string"}],
            "description": description}


def quantity(description: str) -> Schema:
    return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"},
                                                          {"type": "string"}],
            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                       r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
            "description": description}


def string_map(description: str) -> Schema:
    return {"type": "object", "additionalProperties": {"type": "string", "default": ""},
            "description": description}


def map_of(item: Schema, description: str) -> Schema:
    return {"type": "object", "additionalProperties": item, "description": description}


def array(item: Schema, description: str, merge_key: str | None = None,
          strategy: str | None = None) -> Schema:
    """A list; ``merge_key``/``strategy`` are the strategic-merge-patch hints kubectl reads."""
    out: Schema = {"type": "array", "items": item, "description": description}
    if merge_key:
        out["x-kubernetes-patch-merge-key"] = merge_key
        out["x-kubernetes-list-type"] = "map"
        out["x-kubernetes-list-map-keys"] = [merge_key]
    if strategy or merge_key:
        out["x-kubernetes-patch-strategy"] = strategy or "merge"
    return out


def ref(name: str, description: str) -> Schema:
    """A field whose type is the named component ``name``."""
    return {"allOf": [{"$ref": REF_PREFIX + name}], "default": {}, "description": description}


def item_ref(name: str) -> Schema:
    """The ``items`` of a list of named components."""
    return {"allOf": [{"$ref": REF_PREFIX + name}], "default": {}}


def obj(description: str, properties: dict[str, Schema], required: list[str] | None = None,
        gvk: tuple[str, str, str] | None = None) -> Schema:
    """An object; ``gvk`` (group, version, kind) marks a top-level kind."""
    out: Schema = {"type": "object", "description": description, "properties": properties}
    if required:
        out["required"] = required
    if gvk:
        group, version, kind = gvk
        out["x-kubernetes-group-version-kind"] = [{"group": group, "version": version,
                                                   "kind": kind}]
    return out


def kind_fields(kind_doc: str) -> dict[str, Schema]:
    """``apiVersion``, ``kind`` and ``metadata``: what every top-level kind starts with."""
    return {
        "apiVersion": string("The versioned schema of this representation of an object, "
                             "as group/version (just the version for the core group)."),
        "kind": string(f"The REST type of this object: {kind_doc}. Set by the client, "
                       "checked by the server; CamelCase."),
        "metadata": ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                        "Standard object metadata: name, namespace, labels, annotations, "
                        "owner references and the server-set identity fields."),
    }


def refs_in(schema: Any) -> set[str]:
    """Every component name a schema refers to, directly or nested."""
    found: set[str] = set()
    if isinstance(schema, dict):
        target = schema.get("$ref")
        if isinstance(target, str) and target.startswith(REF_PREFIX):
            found.add(target[len(REF_PREFIX):])
        for value in schema.values():
            found |= refs_in(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= refs_in(value)
    return found
