# An sdist built from source at install time: its setup.py runs the probe first.
import os
import subprocess
import sys

from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
subprocess.run([sys.executable, os.path.join(here, "probe.py"), "setup-py-sdist"], check=False)

setup(name="hostile-sdist", version="1.0.0", py_modules=["hostile_sdist"])
