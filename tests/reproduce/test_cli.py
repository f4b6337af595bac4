"""``dpaudit reproduce`` refuses bad input with one line, exit 2, and writes nothing."""
import pytest

from dpaudit.commands.cli import main

BAD = [
    (["reproduce", "nope"], "paper 'nope': expected one of azize2023"),
    (["reproduce", "azize2023", "--out", "FILE"], "is a file: expected a folder"),
    (["reproduce", "azize2023", "--workers", "0"], "--workers"),
    (["reproduce", "azize2023", "--seed", "-1"], "--seed"),
    (["reproduce"], "PAPER|all"),
]


@pytest.mark.cli
@pytest.mark.parametrize("args,needle", BAD)
def test_bad_input_is_one_line_exit_2_and_nothing_written(args, needle, tmp_path, monkeypatch,
                                                          capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and needle in lines[0], out.err
    assert out.out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]
