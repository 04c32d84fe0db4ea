"""A mkdocs hook: warband's docstrings use Sphinx roles (``:class:`Scenario```), which
mkdocstrings renders as the role's name before the code; drop the role and the ``~`` that
shortens a dotted name, so the API pages read ``Scenario``, and the ``::`` that introduces a
literal block."""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj|const|ref):(?=<code>)")
_TILDE = re.compile(r"<code>~(?:[\w]+\.)*([\w]+)</code>")


def on_page_content(html: str, **_: Any) -> str:
    # A reST paragraph ending "::" introduces a literal block, which Markdown shows as code.
    html = html.replace("::</p>", ":</p>")
    return _TILDE.sub(r"<code>\1</code>", _ROLE.sub("", html))
