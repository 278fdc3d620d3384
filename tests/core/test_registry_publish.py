"""Registry discovery and publishing (results summary, README block, paper table)."""

from __future__ import annotations

import pytest

from icml24.core import publish as P
from icml24.core.errors import UserError
from icml24.core.registry import get_paper, list_papers
from icml24.core.store import RunRequest, execute_runs


def test_template_is_loadable_but_not_listed(monkeypatch):
    assert "_template" not in list_papers()
    assert "_template" in list_papers(include_hidden=True)
    assert get_paper("_template").card.number == 0
    with pytest.raises(UserError, match="unknown paper 'nope'"):
        get_paper("nope")
    monkeypatch.setenv("ICML24_EXTRA_PAPERS", "demo=icml24.papers._template")
    assert "demo" in list_papers() and get_paper("demo").card.title.startswith("Template")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    root = tmp_path_factory.mktemp("pub")
    paper = get_paper("_template")
    (out,) = execute_runs([RunRequest(paper, "quick", paper.preset("smoke"), (0, 1, 2))], root=root / "runs")
    return root, out


def test_publish_writes_summary_and_figures_and_readme_block(finished):
    root, out = finished
    readme = root / "README.md"
    readme.write_text(f"# x\n\n{P.START}\nold\n{P.END}\n\ntail\n")
    path = P.publish(out.result, out.run_dir, root / "results", readme=readme)
    assert path == root / "results" / "_template" / "quick.json"
    assert (root / "results" / "_template" / "figures" / "quick" / "rmse_vs_n.png").is_file()
    # results outside the checkout's own results/ never touch a README
    assert "old" in readme.read_text()
    assert P.update_readme(readme, P.R.read_json(path))
    block = P.readme_block(readme)
    assert block == P.render_results_block(P.R.read_json(path))
    assert "| C1 | slope |" in block and readme.read_text().endswith("\n\ntail\n")


def test_readme_without_markers_is_left_alone(tmp_path, finished):
    readme = tmp_path / "README.md"
    readme.write_text("# no block here\n")
    assert not P.update_readme(readme, finished[1].result.to_dict())
    assert readme.read_text() == "# no block here\n"


def test_papers_table_lists_each_slug_with_verdicts(finished):
    root, out = finished
    P.publish(out.result, out.run_dir, root / "results", readme=None)
    table = P.render_papers_table(root / "results", ["_template"])
    assert table.startswith(P.TABLE_START) and table.endswith(P.TABLE_END)
    assert "`_template`" in table and ("pass" in table or "fail" in table)


def test_fmt():
    assert P.fmt(None) == "-" and P.fmt(float("nan")) == "-"
    assert P.fmt(0.123456) == "0.123" and P.fmt(1.5e-5) == "1.50e-05" and P.fmt(0.0) == "0"


def test_git_sha_is_dirty_only_where_the_runs_code_changed(tmp_path):
    import subprocess

    from icml24.core.results import git_sha

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("y = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    sha = git_sha(tmp_path)
    assert sha is not None and not sha.endswith("-dirty")
    (tmp_path / "other.py").write_text("y = 2\n")  # another paper's file being edited
    assert git_sha(tmp_path).endswith("-dirty") and git_sha(tmp_path, paths=["code.py"]) == sha
    (tmp_path / "new.py").write_text("z = 1\n")  # an uncommitted new file of the run's code
    assert git_sha(tmp_path, paths=["code.py", "new.py"]) == sha + "-dirty"


def test_the_diff_behind_a_dirty_sha_is_hashed_beside_it(tmp_path):
    import subprocess

    from icml24.core.results import git_diff_sha, provenance

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    code = [tmp_path / "sub" / "code.py", tmp_path / "sub" / "new.py"]
    assert git_diff_sha(tmp_path, code) is None and git_diff_sha(tmp_path) is None  # clean
    (tmp_path / "sub" / "code.py").write_text("x = 2\n")
    first = git_diff_sha(tmp_path, code)
    assert first and len(first) == 12 and git_diff_sha(tmp_path / "sub", code) == first  # from any folder
    (tmp_path / "sub" / "new.py").write_text("y = 1\n")  # a new file of the run's code counts, by content
    second = git_diff_sha(tmp_path, code)
    (tmp_path / "sub" / "new.py").write_text("y = 2\n")
    assert len({first, second, git_diff_sha(tmp_path, code)}) == 3
    (tmp_path / "sub" / "code.py").write_text("x = 1\n")
    (tmp_path / "sub" / "new.py").unlink()
    assert git_diff_sha(tmp_path, code) is None
    assert "git_diff_sha" in provenance(code_paths=code)


@pytest.mark.parametrize("dirty", [False, True])
def test_a_run_of_uncommitted_code_is_not_published_and_names_its_diff(tmp_path, monkeypatch, capsys, dirty):
    from conftest import REPO

    from icml24 import cli
    from icml24.core import results as R

    monkeypatch.setenv("ICML24_EXTRA_PAPERS", "stages=frame_fixtures.stages")
    monkeypatch.syspath_prepend(str(REPO / "tests" / "fixtures"))
    monkeypatch.setattr(R, "git_sha", lambda cwd=None, paths=None: "abc" + ("-dirty" if dirty else ""))
    monkeypatch.setattr(R, "git_diff_sha", lambda cwd=None, paths=None: "0123456789ab" if dirty else None)
    code = cli.run("stages", "quick", None, [], "serial", None, None, None, tmp_path / "runs", tmp_path / "results",
                   1000, False)
    out = " ".join(capsys.readouterr().out.split())
    published = tmp_path / "results" / "stages" / "quick.json"
    assert code == 0 and published.is_file() != dirty
    if dirty:
        assert "not published: its code has uncommitted changes (diff 0123456789ab, in provenance.json)" in out
        (prov,) = (tmp_path / "runs").rglob("provenance.json")
        assert R.read_json(prov)["git_diff_sha"] == "0123456789ab"
    else:
        assert R.read_json(published)["provenance"]["git_sha"] == "abc"


def test_a_runs_sha_is_dirty_also_for_uncommitted_claims():
    """The verdicts published beside the seeds come from claims.py and the claim engine: their changes count."""
    from icml24.core.registry import code_files
    from icml24.core.store import source_files

    paper = get_paper("_template")
    names = {p.relative_to(paper.folder.parents[1]).as_posix() for p in source_files(paper)}
    assert {"papers/_template/claims.py", "core/claims.py", "core/power.py", "core/stats.py"} <= names
    assert set(code_files(paper.folder)) <= set(source_files(paper)) and len(names) == len(source_files(paper))
