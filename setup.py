"""What pyproject.toml cannot say: scenarios/ ships inside the package, as `warband._scenarios`.

A user who installed the wheel has no checkout, so `warband run ping_pong` and `warband
scenarios` read the scenarios from there (warband/_bundled.py); in a checkout the same files
stay where the README shows them, in scenarios/. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["warband*"]), "warband._scenarios"],
    package_dir={"warband._scenarios": "scenarios"},
)
