import hostile_sdist
import six


def test_the_sdist_and_a_pypi_package_are_installed():
    assert hostile_sdist.ANSWER == 42
    assert six.PY3
