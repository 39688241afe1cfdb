"""Label selectors: structured and string forms select the same pods."""

import pytest

from hvpa.labels import LabelSelector, SelectorError

LABELS = {"app": "web", "tier": "front", "version": "3"}


@pytest.mark.parametrize(
    ("text", "selected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app in (web,api)", True),
        ("app notin (web)", False),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("app=web,tier=back", False),
        ("version>2", True),
        ("version<2", False),
        ("missing!=x", True),
    ],
)
def test_string_form(text: str, selected: bool) -> None:
    assert LabelSelector.parse(text).matches(LABELS) is selected


def test_structured_form() -> None:
    selector = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
        }
    )
    assert selector.matches(LABELS)
    assert not selector.matches({"app": "web"})
    assert LabelSelector.parse(str(selector)) == selector


def test_nil_selects_nothing_and_empty_everything() -> None:
    assert not LabelSelector.from_dict(None).matches(LABELS)
    assert LabelSelector.from_dict({}).matches(LABELS)


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [{"key": "a", "operator": "In"}]},
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        {"matchExpressions": [{"key": "a", "operator": "Near"}]},
        {"matchExpressions": [{"operator": "Exists"}]},
    ],
)
def test_structured_rejects(selector: dict[str, object]) -> None:
    with pytest.raises(SelectorError, match="matchExpressions\\[0\\]"):
        LabelSelector.from_dict(selector)


def test_string_rejects() -> None:
    with pytest.raises(SelectorError):
        LabelSelector.parse("app in web")


def test_anchors_are_the_equality_requirements() -> None:
    """What an index by label value can narrow a search with: `=`, `==` and `in`, not `!=`,
    `notin`, exists or `>`."""
    selector = LabelSelector.parse("app=web,tier in (back,front),zone!=a,track notin (x),env,n>1")
    assert selector.anchors == (("app", ("web",)), ("tier", ("back", "front")))
    assert LabelSelector.parse("!env").anchors == ()
