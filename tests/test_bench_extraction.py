"""workflow/scripts/bench_extraction.py: the patches to the authors' code and the comparison of pairs."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))
import bench_extraction as bench


def authors_tree(root: Path, cld3: bool = True) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "extract_bitext.py").write_text("print('x')\n")
    (root / "src" / "utils.py").write_text("def process_metadata_from_omdb(imdb_id, apikey):\n    return 1\n")
    (root / "src" / "preprocess_opensubs.py").write_text("import re\n" + ("import cld3\n" if cld3 else ""))
    return root


def test_the_two_patches_and_nothing_else(tmp_path):
    run_dir = bench.authors_copy(authors_tree(tmp_path / "a"), tmp_path / "work")
    assert (run_dir / "src" / "extract_bitext.py").read_text() == "print('x')\n"
    assert "import cld3" not in (run_dir / "src" / "preprocess_opensubs.py").read_text().replace("# import cld3", "")
    spec = importlib.util.spec_from_file_location("authors_utils", run_dir / "src" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    assert utils.process_metadata_from_omdb("tt1", "key") == {}
    assert (run_dir / "blocklist" / "blocklist.de").read_text() == "de/0/0/0.xml\n"


def test_a_changed_authors_file_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="import cld3"):
        bench.authors_copy(authors_tree(tmp_path / "a", cld3=False), tmp_path / "work")


def test_pairs_compared_in_order_and_classified(tmp_path):
    ours = [("A.", "a.", []), ("B. - C.", "b. c.", ["A."]), ("D.", "d.", []), ("E.", "e.", ["D."]), ("F.", "f.", [])]
    (tmp_path / "all.jsonl").write_text("".join(
        json.dumps({"text": {"en": en, "de": de}, "previous": {"en": prev, "de": prev}}) + "\n" for en, de, prev in ours))
    data = tmp_path / "data"
    (data / "context").mkdir(parents=True)
    # theirs: A, C B (same words, dash aside), D (previous line differs), G (only theirs) where E and F are
    (data / "train.en").write_text("A.\nC. B.\nD.\nG.\n")
    (data / "train.de").write_text("a.\nc. b.\nd.\ng.\n")
    (data / "context" / "train.1.en").write_text("\nA.\nC. B.\n\n")
    result = bench.compare(tmp_path / "all.jsonl", data)
    assert result["ours"] == 5 and result["theirs"] == 4
    assert result["differences"] == {"same link, sentences in another order": 1, "only ours": 2, "only theirs": 1}
    assert result["identical"] == 2
    assert result["previous_line_differs"] == 1  # D: none here, "C. B." there (A and B C agree; E, F, G unpaired)


def test_a_work_folder_holding_a_users_files_is_refused_untouched(tmp_path):
    users = tmp_path / "home"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="not made by this script"):
        bench.claim_work_dir(users)
    assert [p.name for p in users.iterdir()] == ["notes.txt"]
    fresh = bench.claim_work_dir(tmp_path / "new")
    assert (fresh / bench.MARK).is_file() and bench.claim_work_dir(fresh) == fresh   # its own folder: reused
