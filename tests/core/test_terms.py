"""The closed vocabularies (dpaudit.core.terms): members are their JSON strings."""
import json

from dpaudit.core.terms import PrivacyModel, Side, Verdict
from dpaudit.data.tables import MODELS
from dpaudit.verdicts.result import EXIT_CODES


def test_members_read_and_write_as_their_text():
    doc = {"verdict": Verdict.INCONCLUSIVE, "model": PrivacyModel.STREAM, Side.D_PRIME: 1}
    assert json.dumps(doc) == '{"verdict": "inconclusive", "model": "stream", "d_prime": 1}'
    assert Verdict("pass") is Verdict.PASS and f"{Verdict.VIOLATION}" == "violation"
    assert {"pass": 0}[Verdict.PASS] == 0 and EXIT_CODES["violation"] == 1


def test_every_privacy_model_has_its_table_model_and_nothing_else():
    assert list(MODELS) == list(PrivacyModel)


def test_sides_name_the_pair_in_order():
    assert [s.index for s in Side] == [0, 1]
    assert [s.label for s in Side] == ["d", "d'"]
    assert Side.D.other is Side.D_PRIME and Side.D_PRIME.other is Side.D
