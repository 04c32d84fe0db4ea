"""The scenarios that ship with warband, found by name.

A checkout keeps them in ``scenarios/`` beside the package; an installed wheel has no checkout,
so setup.py ships the same files inside the package as ``warband/_scenarios/``. ``warband run
ping_pong`` (or ``ping_pong.py``) runs the bundled file when no such file is in the current
directory; ``warband scenarios`` lists them and ``warband scenarios --copy DIR`` writes them out
to read and change.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from .exceptions import ConfigurationError

_PACKAGE = Path(__file__).resolve().parent


def scenarios_dir() -> Path | None:
    """The folder of the bundled scenarios: the wheel's ``warband/_scenarios``, else the
    checkout's ``scenarios/`` (an editable install); None when neither is there."""
    for folder in (_PACKAGE / "_scenarios", _PACKAGE.parent / "scenarios"):
        if (folder / "ping_pong.py").is_file():
            return folder
    return None


def bundled_scenarios() -> dict[str, Path]:
    """Each bundled scenario's name (its file's stem) and file, by name."""
    folder = scenarios_dir()
    if folder is None:
        return {}
    return {file.stem: file for file in sorted(folder.glob("*.py")) if file.stem[0] != "_"}


def bundled_file(argument: str | Path) -> Path | None:
    """The bundled file ``argument`` names, when it is a bare name (``ping_pong`` or
    ``ping_pong.py``, no folder) that is not a file here; else None (a path is taken as given)."""
    text = str(argument)
    if Path(text).exists() or Path(text).name != text:
        return None
    return bundled_scenarios().get(text.removesuffix(".py"))


def summary(file: Path) -> str:
    """The first line of a scenario file's docstring (read, not imported: listing is cheap)."""
    docstring = ast.get_docstring(ast.parse(file.read_text(encoding="utf-8")))
    return docstring.splitlines()[0] if docstring else ""


def copy_scenarios(target: Path) -> list[Path]:
    """Copy every bundled scenario into ``target`` (made if missing) and return the new files.

    Raises :class:`ConfigurationError` before copying anything when one of them is already there
    (nothing of the user's is overwritten) or when there is nothing to copy.
    """
    files = bundled_scenarios()
    if not files:
        raise ConfigurationError("this installation of warband holds no bundled scenarios")
    if target.exists() and not target.is_dir():
        raise ConfigurationError(f"--copy {str(target)!r} is a file, not a directory")
    taken = sorted(name for name in files if (target / f"{name}.py").exists())
    if taken:
        raise ConfigurationError(
            f"{target} already holds {', '.join(f'{name}.py' for name in taken)}; "
            "copy into another directory, or remove them first"
        )
    target.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copyfile(file, target / file.name)) for file in files.values()]
