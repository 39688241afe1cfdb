"""The documentation of the Hvpa's fields, read from the types themselves.

Each field of a model struct is documented by the string literal written
right after it (an attribute docstring, as Sphinx reads them), and each
struct by its class docstring. `hvpa.api.crd` puts them into the CRD's
schema, so `kubectl explain hvpa.spec` shows the same words a reader of the
code sees, from one source.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache
from itertools import pairwise

__all__ = ["class_doc", "field_docs"]


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name (Python spelling) -> its attribute docstring, for `cls` and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("hvpa."):
            docs.update(_own_field_docs(klass))
    return docs


def class_doc(cls: type) -> str:
    """The first paragraph of the class docstring, on one line."""
    doc = inspect.getdoc(cls) or ""
    return _one_paragraph(doc)


def _own_field_docs(cls: type) -> dict[str, str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for statement, following in pairwise(body):
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = _paragraphs(inspect.cleandoc(following.value.value))
    return docs


def _paragraphs(text: str) -> str:
    return "\n\n".join(" ".join(part.split()) for part in text.split("\n\n"))


def _one_paragraph(text: str) -> str:
    return " ".join(text.split("\n\n", 1)[0].split())
