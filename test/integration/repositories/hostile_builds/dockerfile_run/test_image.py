import os


def test_the_dockerfile_was_built():
    assert os.path.exists("/opt/hostile/probe.py")
