"""Which series a metrics API answers with: the one set of rules every answerer uses.

The controller's metrics reader (`hvpa.controller.metricsapi`) sends each
read to an aggregated metrics API with the selectors the HPA sends:
PodMetrics by the target's pod selector; custom metrics for one object, or
for every object (`*`) its selector selects, narrowed by the metric's own
selector (`metricLabelSelector`); external metrics by name and the metric's
selector. Two places answer such reads from series they hold: the in-repo
API server (`hvpa/sim/apiserver/metrics.py`), which the integration tests
run the controller against, and `hvpa recommend`'s scenario loader
(`hvpa/scenario.py`). Both choose series with these functions, so a
scenario's metric objects are read exactly as the controller would have
them read.
"""

from __future__ import annotations

from collections.abc import Mapping

from hvpa.labels import LabelSelector

__all__ = ["ANY_OBJECT", "custom_value_selected", "external_value_selected", "selects"]

# A custom-metrics read of every object of a resource, rather than one by name.
ANY_OBJECT = "*"


def selects(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """A read's selector against a series' (or its object's) labels; no selector selects all."""
    return selector is None or selector.matches(labels)


def custom_value_selected(
    *,
    object_name: str,
    object_labels: Mapping[str, str],
    metric_labels: Mapping[str, str],
    name: str,
    selector: LabelSelector | None,
    metric_selector: LabelSelector | None,
) -> bool:
    """custom.metrics.k8s.io: the object named (or any whose labels `selector` selects), and
    a series whose own labels `metric_selector` selects."""
    if name == ANY_OBJECT:
        if not selects(selector, object_labels):
            return False
    elif object_name != name:
        return False
    return selects(metric_selector, metric_labels)


def external_value_selected(
    *,
    metric: str,
    labels: Mapping[str, str],
    wanted: str,
    selector: LabelSelector | None,
) -> bool:
    """external.metrics.k8s.io: the metric by name, in any case (the HPA lower-cases it),
    and a series whose labels the metric's selector selects."""
    return metric.lower() == wanted.lower() and selects(selector, labels)
