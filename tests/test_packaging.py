"""The wheel holds every subpackage, and the README's commands are CI's."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
NOT_PACKAGED = {"tests", "bench", "filecheck", "build", ".venv", ".ci", ".git"}


def _declared_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def test_every_folder_with_init_is_a_declared_package() -> None:
    found = {"xtc"}
    for init in ROOT.rglob("__init__.py"):
        folder = init.parent.relative_to(ROOT)
        if folder.parts and (
            folder.parts[0] in NOT_PACKAGED or folder.parts[0].endswith(".egg-info")
        ):
            continue
        if folder.parts:
            found.add("xtc." + ".".join(folder.parts))
    missing = found - _declared_packages()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"


def test_every_declared_package_exists() -> None:
    for package in _declared_packages() - {"xtc"}:
        folder = ROOT.joinpath(*package.split(".")[1:])
        assert (folder / "__init__.py").is_file(), f"{package} has no {folder}/__init__.py"


def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text().split("\n")
    block = readme[readme.index("```sh") + 1 : readme.index("```sh") + 3]
    setup = block[0].split("#")[0].strip()
    install = setup[setup.index("pip install") :]
    test = block[1].split("#")[0].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert install in ci and test in ci, (install, test)


def test_xdsl_is_pinned_exactly() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pins = [d for d in config["project"]["dependencies"] if d.startswith("xdsl")]
    assert len(pins) == 1 and "==" in pins[0], pins
