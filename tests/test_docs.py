"""The docs site (mkdocs.yml, docs/): `mkdocs build --strict` passes without the network, every
page of the nav is built, every included file is in its page, and no page loads anything from
another host (no CDN, no web fonts)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

# A proxy that refuses every connection: a build that reaches for the network fails.
NO_NETWORK = {
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
    # Material prints a banner about MkDocs 2.0 on every build; it is not a warning of ours.
    "NO_MKDOCS_2_WARNING": "1",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **NO_NETWORK},
    )
    assert 0 == build.returncode, build.stdout + build.stderr
    assert "WARNING" not in build.stderr, build.stderr
    return out


def _nav_pages() -> list[str]:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") :]
    return re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M)


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    pages = _nav_pages()
    assert len(pages) > 25
    missing = [page for page in pages if not (site / page.replace(".md", ".html")).is_file()]
    assert [] == missing


def test_every_included_file_is_in_its_page_and_no_include_is_left_unresolved(site: Path) -> None:
    unresolved = []
    for page in _nav_pages():
        source = (REPO / "docs" / page).read_text(encoding="utf-8")
        built = (site / page.replace(".md", ".html")).read_text(encoding="utf-8")
        text = html.unescape(re.sub(r"<[^>]+>", "", built))
        if "--8<--" in text or "8 < --" in text:
            unresolved.append(page)
        for included in re.findall(r'^--8<-- "([^"]+)"$', source, re.M):
            file, _, section = included.partition(":")
            content = (REPO / file).read_text(encoding="utf-8")
            if file.endswith(".md"):  # rendered: its first heading or sentence is in the page
                first = next(line for line in content.splitlines() if line.strip())
                if section:
                    first = _section_start(content, section)
                assert _words(first)[:6] == _words(text)[_find(_words(text), _words(first)[:6])]
            else:  # a code block: every line is in the page as written
                lines = [line.strip() for line in content.splitlines() if line.strip()]
                assert [] == [line for line in lines if line not in text], f"{page}: {file}"
    assert [] == unresolved


def test_no_page_loads_a_script_style_font_or_image_from_another_host(site: Path) -> None:
    remote = re.compile(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]*"')
    loading = {
        str(page.relative_to(site)): remote.findall(page.read_text(encoding="utf-8"))
        for page in site.rglob("*.html")
    }
    assert {} == {page: found for page, found in loading.items() if found}


def test_the_api_reference_renders_the_docstrings_without_sphinx_roles(site: Path) -> None:
    page = (site / "reference" / "api" / "warband.html").read_text(encoding="utf-8")
    assert 'id="warband.Scenario"' in page
    assert "Decorator: register the function that builds the scenario" in page
    text = re.sub(r"<[^>]+>", "", page)
    assert [] == re.findall(r":(?:class|meth|func|mod|attr|exc):\S", text)


def test_the_readme_links_the_tutorial_first() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_link = re.search(r"\]\(([^)]+)\)", readme)
    assert first_link is not None
    assert "docs/tutorial/index.md" == first_link.group(1)


def _section_start(content: str, section: str) -> str:
    """The first line of text after the ``--8<-- [start:section]`` marker of ``content``."""
    after = content[content.index(f"--8<-- [start:{section}]") :].splitlines()[1:]
    return next(line for line in after if line.strip() and not line.startswith("```"))


def _words(text: str) -> list[str]:
    """The words of ``text``, without Markdown's marks: what survives rendering."""
    return re.findall(r"[A-Za-z0-9]+", text)


def _find(words: list[str], run: list[str]) -> slice:
    """Where ``run`` occurs in ``words`` (an empty slice when it does not)."""
    for start in range(len(words) - len(run) + 1):
        if words[start : start + len(run)] == run:
            return slice(start, start + len(run))
    return slice(0, 0)
