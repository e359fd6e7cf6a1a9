"""Test-wide settings: under CI (CI=true) hypothesis runs derandomized, so a
landing is judged on the same examples every time; locally it explores."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
