"""Test-wide settings: under CI (CI=true) hypothesis runs derandomized, so a
landing is judged on the same examples every time; locally it explores.
Compiles verify the IR after every pass (XTC_VERIFY_EACH=1), as mlir-opt's
tests do; a test that means otherwise says so."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
os.environ.setdefault("XTC_VERIFY_EACH", "1")
