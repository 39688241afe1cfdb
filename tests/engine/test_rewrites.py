"""The rule for another writer rewriting what hvpa set (hvpa/engine/rewrites.py), on plain data.

Covers: what counts as a rewrite (another manager owns the field now; or, without
managedFields, the value went back), what does not (a third value nobody explains, a
container that is gone), the count in a row and the doubling holds, and the three ways a
hold ends (quiet for a window, the field released, the resume annotation).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hvpa.api import parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.engine.rewrites import (
    CONFLICTING_FIELD_MANAGER,
    RESUME_ANNOTATION,
    assess,
    hold_seconds,
    record_writes,
)
from hvpa.engine.settings import Settings
from hvpa.engine.vertical import ContainerResources
from hvpa.labels import LabelSelector
from hvpa.records import (
    REPLICAS_FIELD,
    ContainerSpec,
    FieldOwner,
    Resources,
    TargetRecord,
    container_field,
)

NOW = 1_800_000_000.0
HOUR = 3600.0
SETTINGS = Settings()  # a one-hour window, holds up to a day
CPU_REQUEST = container_field("app", False, "requests", "cpu")


def at(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def hvpa(history: dict[str, Any] | None = None, annotation: str | None = None) -> Hvpa:
    metadata: dict[str, Any] = {"name": "web", "namespace": "ns"}
    if annotation is not None:
        metadata["annotations"] = {RESUME_ANNOTATION: annotation}
    obj: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": metadata,
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "hpa": {"deploy": True, "template": {"spec": {"minReplicas": 1, "maxReplicas": 9}}},
            "vpa": {"deploy": False},
        },
    }
    if history is not None:
        obj["status"] = {"history": history}
    return parse_hvpa(obj)


def target(replicas: int, owners: tuple[FieldOwner, ...] = (), cpu: int = 100) -> TargetRecord:
    return TargetRecord(
        api_version="apps/v1",
        kind="Deployment",
        namespace="ns",
        name="web",
        uid="u",
        generation=1,
        resource_version="1",
        replicas=replicas,
        selector=LabelSelector.from_dict({"matchLabels": {"app": "web"}}),
        containers=(ContainerSpec("app", requests=Resources(cpu=cpu)),),
        field_owners=owners,
    )


def wrote_replicas(when: float, value: int = 5, earlier: int = 2) -> dict[str, Any]:
    return {
        "axis": "horizontal",
        "time": at(when),
        "fields": [{"field": REPLICAS_FIELD, "value": str(value), "earlier": str(earlier)}],
    }


def rewrite(when: float, count: int, manager: str = "argocd-controller") -> dict[str, Any]:
    return {
        "axis": "horizontal",
        "time": at(when),
        "field": REPLICAS_FIELD,
        "manager": manager,
        "value": "2",
        "written": "5",
        "count": count,
    }


def owner(manager: str, when: float | None = None) -> FieldOwner:
    return FieldOwner(REPLICAS_FIELD, manager, "Update", when)


@pytest.mark.parametrize(
    ("count", "hours"),
    [
        pytest.param(1, 0, id="once-is-not-a-fight"),
        pytest.param(2, 1, id="twice-holds-a-window"),
        pytest.param(3, 2, id="then-doubles"),
        pytest.param(4, 4, id="and-doubles"),
        pytest.param(7, 24, id="up-to-a-day"),
        pytest.param(10_000, 24, id="never-more"),
    ],
)
def test_hold_lengths(count: int, hours: float) -> None:
    assert hold_seconds(count, SETTINGS) == hours * HOUR


def test_another_owner_of_a_changed_field_is_a_rewrite_at_its_managed_fields_time() -> None:
    history = {"writes": [wrote_replicas(NOW - 600)]}
    found = assess(
        hvpa(history), target(2, (owner("argocd-controller", NOW - 300),)), NOW, SETTINGS
    )
    (seen,) = found.rewrites
    assert (seen.manager, seen.field, seen.value, seen.written, seen.count) == (
        "argocd-controller",
        REPLICAS_FIELD,
        "2",
        "5",
        1,
    )
    assert seen.time.timestamp() == NOW - 300
    assert found.writes == () and found.holds == ()


def test_without_managed_fields_a_value_put_back_is_a_rewrite_by_an_unnamed_writer() -> None:
    found = assess(hvpa({"writes": [wrote_replicas(NOW - 600)]}), target(2), NOW, SETTINGS)
    (seen,) = found.rewrites
    assert seen.manager == "" and seen.time.timestamp() == NOW


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(target(7), id="a-third-value-nobody-explains"),
        pytest.param(target(5, (owner("hvpa"),)), id="still-hvpas"),
        pytest.param(target(2, (owner("hvpa"),)), id="back-but-owned-by-hvpa-name"),
    ],
)
def test_what_is_not_counted(record: TargetRecord) -> None:
    found = assess(hvpa({"writes": [wrote_replicas(NOW - 600)]}), record, NOW, SETTINGS)
    if record.spec_replicas == 2:
        # The value went back: counted even though managedFields name hvpa's own manager
        # (another hvpa instance under the same name, or entries a client reset).
        assert len(found.rewrites) == 1
    else:
        assert found.rewrites == ()


def test_a_container_that_is_gone_is_no_rewrite() -> None:
    history = {
        "writes": [
            {
                "axis": "vertical",
                "time": at(NOW - 600),
                "fields": [
                    {"field": container_field("old", False, "requests", "cpu"), "value": "2"}
                ],
            }
        ]
    }
    assert assess(hvpa(history), target(2), NOW, SETTINGS).rewrites == ()


def test_the_second_rewrite_within_the_window_holds_the_axis() -> None:
    history = {"writes": [wrote_replicas(NOW - 60)], "rewrites": [rewrite(NOW - 1800, 1)]}
    found = assess(hvpa(history), target(2, (owner("argocd-controller", NOW - 30),)), NOW, SETTINGS)
    (hold,) = found.holds
    assert (hold.axis, hold.reason) == ("horizontal", CONFLICTING_FIELD_MANAGER)
    assert 'field manager "argocd-controller" rewrote .spec.replicas of Deployment ns/web' in (
        hold.message
    )
    assert found.rewrites[0].count == 2
    assert any("kubectl annotate --overwrite hvpa -n ns web" in line for line in found.explanation)


def test_a_rewrite_after_the_window_starts_again() -> None:
    history = {"writes": [wrote_replicas(NOW - 60)], "rewrites": [rewrite(NOW - 2 * HOUR, 1)]}
    found = assess(hvpa(history), target(2, (owner("argocd-controller", NOW - 30),)), NOW, SETTINGS)
    assert found.rewrites[0].count == 1 and found.holds == ()


def test_a_rewrite_of_the_probe_after_a_hold_doubles_it() -> None:
    # Held from NOW - 2 h for 1 h; hvpa probed at its end, rewritten within the next window.
    history = {"writes": [wrote_replicas(NOW - 70 * 60)], "rewrites": [rewrite(NOW - 2 * HOUR, 2)]}
    found = assess(
        hvpa(history), target(2, (owner("argocd-controller", NOW - 65 * 60),)), NOW, SETTINGS
    )
    assert found.rewrites[0].count == 3
    (hold,) = found.holds
    assert f"until {at(NOW - 65 * 60 + 2 * HOUR)}" in hold.message


@pytest.mark.parametrize(
    ("hvpa_object", "record", "held"),
    [
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}),
            target(2, (owner("argocd-controller"),)),
            True,
            id="held",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - HOUR - 1, 2)]}),
            target(2, (owner("argocd-controller"),)),
            False,
            id="hold-ran-out",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}),
            target(2, (owner("flux"),)),
            False,
            id="field-released",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}, annotation=at(NOW - 60)),
            target(2, (owner("argocd-controller"),)),
            False,
            id="resume-annotation",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}, annotation=at(NOW - 900)),
            target(2, (owner("argocd-controller"),)),
            True,
            id="annotation-older-than-the-rewrite",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}, annotation="soon"),
            target(2, (owner("argocd-controller"),)),
            True,
            id="annotation-not-a-time",
        ),
        pytest.param(
            hvpa({"rewrites": [rewrite(NOW - 600, 2)]}, annotation=at(NOW + 3600)),
            target(2, (owner("argocd-controller"),)),
            True,
            id="annotation-far-ahead",
        ),
    ],
)
def test_how_a_hold_ends(hvpa_object: Hvpa, record: TargetRecord, held: bool) -> None:
    found = assess(hvpa_object, record, NOW, SETTINGS)
    assert bool(found.holds) is held


def test_a_quiet_window_after_the_hold_forgets_the_fight() -> None:
    found = assess(hvpa({"rewrites": [rewrite(NOW - 2 * HOUR - 1, 2)]}), target(2), NOW, SETTINGS)
    assert found.rewrites == ()


def test_writes_are_recorded_per_axis_with_the_values_they_replace() -> None:
    before = (ContainerSpec("app", requests=Resources(cpu=100)),)
    after = (
        ContainerResources("app", Resources(cpu=250), Resources(), applied=(object(),)),  # type: ignore[arg-type]
    )
    writes = record_writes((), NOW, current=2, replicas=4, before=before, after=after)
    assert [(w.axis, [(f.field, f.value, f.earlier) for f in w.fields]) for w in writes] == [
        ("horizontal", [(REPLICAS_FIELD, "4", "2")]),
        ("vertical", [(CPU_REQUEST, "250m", "100m")]),
    ]
    again = record_writes(writes, NOW + 60, current=4, replicas=4, before=before, after=())
    assert again == writes, "nothing written later: the records and their times stay"


def test_an_earlier_spelling_of_the_same_amount_is_no_rewrite() -> None:
    """A status written by an earlier hvpa spells amounts its own way (`0.1` for 100m CPU):
    the same amount must not read as another manager's rewrite after an upgrade, though
    another manager co-owns the field."""
    write = {
        "axis": "vertical",
        "time": at(NOW - 600),
        "fields": [{"field": CPU_REQUEST, "value": "0.1", "earlier": "200m"}],
    }
    co_owner = FieldOwner(CPU_REQUEST, "argocd-controller", "Apply", NOW - 300)
    found = assess(hvpa({"writes": [write]}), target(3, (co_owner,), cpu=100), NOW, SETTINGS)
    assert found.rewrites == ()
    assert len(found.writes) == 1, "the write stands: nothing superseded it"
