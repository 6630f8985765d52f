# Passes only with the versions poetry.lock pins (newer ones exist on PyPI), installed by Poetry's own
# installer, and with the project itself installed by Poetry, as the project's CI runs `poetry install`.
import importlib.metadata

import pytest
import six

import wordcount


def test_the_locked_versions_are_installed_by_poetry():
    assert six.__version__ == "1.16.0"
    assert pytest.__version__ == "7.4.4"
    assert importlib.metadata.distribution("six").read_text("INSTALLER").lower().startswith("poetry")


def test_the_project_is_installed_by_poetry_and_runs_from_the_workspace():
    project = importlib.metadata.distribution("wordcount")
    assert project.version == "0.1.0"
    assert project.read_text("INSTALLER").lower().startswith("poetry")
    assert wordcount.__file__ == "/workspace/wordcount.py"
    assert wordcount.count("one two three") == 3
