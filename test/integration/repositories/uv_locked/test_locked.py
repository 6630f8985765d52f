# Passes only with the versions uv.lock pins (newer ones exist on PyPI).
import pytest
import six


def test_the_locked_versions_are_installed():
    assert six.__version__ == "1.16.0"
    assert pytest.__version__ == "7.2.0"
