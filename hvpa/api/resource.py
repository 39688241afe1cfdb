"""The `Hvpa` object itself: apiVersion, kind, metadata, spec, status."""

from __future__ import annotations

from typing import Any, Final

from hvpa.api.base import Model
from hvpa.api.spec import HvpaSpec
from hvpa.api.status import HvpaStatus

__all__ = ["API_VERSION", "GROUP", "KIND", "PLURAL", "VERSION", "Hvpa"]

GROUP: Final = "autoscaling.k8s.io"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
KIND: Final = "Hvpa"
PLURAL: Final = "hvpas"


class Hvpa(Model, frozen=True, kw_only=True):
    api_version: str = API_VERSION
    """autoscaling.k8s.io/v1alpha1."""
    kind: str = KIND
    """Hvpa."""
    # metav1.ObjectMeta, kept whole so that writing the object back loses nothing.
    metadata: dict[str, Any] = {}
    spec: HvpaSpec
    """What to scale and how: the target, the horizontal (hpa) and vertical (vpa) settings, and
    how the two combine.
    """
    status: HvpaStatus | None = None
    """What the controller observed and decided last, and the history its next decision reads."""

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", ""))

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace", ""))

    @property
    def generation(self) -> int | None:
        generation = self.metadata.get("generation")
        return generation if isinstance(generation, int) else None
