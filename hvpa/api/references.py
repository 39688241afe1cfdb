"""Names that hvpa puts into API request paths, and the rules that keep them harmless there.

An Hvpa's metric names, described objects and target name become segments
of the URLs the controller requests with its own, cluster-wide rights. A name
of `..` or one holding `/` would move the request elsewhere, so these are
checked as upstream's HPA validation checks them (apimachinery's path segment
rule: not `.` or `..`, no `/` or `%`), and an apiVersion must be a real
`group/version`. The same rules, spelled in CEL, are in the CRD
(`hvpa.api.celrules`), so the API server refuses what `hvpa validate` refuses.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "API_VERSION_MESSAGE",
    "API_VERSION_PATTERN",
    "CONFIG_MAP_NAMESPACE_MESSAGE",
    "PATH_SEGMENT_MAY_NOT_BE",
    "PATH_SEGMENT_MAY_NOT_CONTAIN",
    "is_api_version",
    "path_segment_problems",
]

PATH_SEGMENT_MAY_NOT_BE: Final = (".", "..")
PATH_SEGMENT_MAY_NOT_CONTAIN: Final = ("/", "%")

_DNS_LABEL: Final = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
# A DNS-1123 subdomain (the group) then a DNS-1123 label (the version), or a version alone.
API_VERSION_PATTERN: Final = rf"^({_DNS_LABEL}(\.{_DNS_LABEL})*/)?{_DNS_LABEL}$"
API_VERSION_MESSAGE: Final = (
    'must be VERSION or GROUP/VERSION, a DNS subdomain and a DNS label (e.g. "v1", "apps/v1")'
)
CONFIG_MAP_NAMESPACE_MESSAGE: Final = (
    "must not be set: the ConfigMap is always read from the Hvpa's own namespace"
)


def path_segment_problems(name: str) -> list[str]:
    """Upstream's messages for a name that cannot be one path segment (none when it can)."""
    if name in PATH_SEGMENT_MAY_NOT_BE:
        return [f"may not be '{name}'"]
    return [f"may not contain '{part}'" for part in PATH_SEGMENT_MAY_NOT_CONTAIN if part in name]


def is_api_version(text: str) -> bool:
    """`v1` or `group/version`; a group is at most 253 characters, as a DNS subdomain."""
    group, _, _ = text.rpartition("/")
    return len(group) <= 253 and re.fullmatch(API_VERSION_PATTERN, text) is not None
