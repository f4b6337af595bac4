"""dpaudit.checks.constants and the papers' theory modules: worked numbers of Azize et al. (2023), Chen et al.
(2024) and Barbara et al. (2025) computed independently of this code (Python with NumPy/SciPy, 6
significant digits, from the equations named at each table), the report's cross-checks, input errors, and closed form vs numerical
optimisation on generated instances (hypothesis, 100 examples each)."""
import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpaudit.algorithms import registry
from dpaudit.algorithms.adap_tt import theory as A
from dpaudit.algorithms.theory import cross_check
from dpaudit.checks import constants as C
from dpaudit.errors import InputError


def close(x, v, digits):
    """x rounds to the printed value v given to ``digits`` decimals."""
    assert abs(float(x) - v) <= 0.5001 * 10.0 ** -digits, (x, v)


def sig(x, v, n):
    """x agrees with the printed value v to n significant digits."""
    assert abs(float(x) - v) <= 0.5001 * 10.0 ** (math.floor(math.log10(abs(v))) - n + 1), (x, v)


@pytest.fixture(scope="module")
def rep004():
    return {name: C.constants("azize2023", {"instance": name}) for name in A.INSTANCES_004}


# ------------------- azize2023: T*_TV (Prop. 1), T*_KL (Thm 2), T*_{KL,1/2} (Thm 5) per instance
# instance: K, a*(1-based), Δmin, Δmax, T*_TV, T*_KL Bern, T*_KL,1/2, ×¼, Gauss T*_KL, β*,
#           ε_b, T*_TV/T*_KL
TABLE1 = {
    "mu1": (6, 1, 0.05, 0.45, 102.2222, 473.236, 8015.85, 2003.96, 7209.92, 0.3329, 0.03600,
            0.2160),
    "mu1_k5": (5, 1, 0.05, 0.45, 82.2222, 395.542, 6414.87, 1603.72, 5981.20, 0.3654, 0.03465,
               0.2079),
    "mu2": (5, 1, 0.05, 0.05, 100.0000, 1424.747, 8000.00, 2000.00, 7200.00, 0.3333, 0.01170,
            0.0702),
    "mu3": (5, 5, 0.25, 1, 12.3333, 11.430, 144.48, 36.12, 142.97, 0.4505, 0.17984, 1.0790),
    "mu4": (5, 1, 0.125, 0.5, 24.6667, 122.843, 577.92, 144.48, 571.87, 0.4505, 0.03347, 0.2008),
    "mu5": (5, 1, 0.21875, 0.5, 15.9429, 46.377, 209.34, 52.33, 203.33, 0.4182, 0.05729, 0.3438),
    "mu6": (5, 1, 0.03125, 0.5, 77.5556, 1631.870, 8360.84, 2090.21, 8357.59, 0.4902, 0.00792,
            0.0475),
}


@pytest.mark.parametrize("name", sorted(TABLE1))
def test_azize2023_characteristic_times(rep004, name):
    K, a1, dmin, dmax, ttv, tkl, tb, tb4, tg, bstar, epsb, ratio = TABLE1[name]
    r = rep004[name]
    assert r["K"] == K and r["a_star"] == a1 - 1
    assert r["delta_min"] == pytest.approx(dmin) and r["delta_max"] == pytest.approx(dmax)
    close(r["T_TV"], ttv, 4)
    close(r["T_TV_lp"], ttv, 4)
    close(r["T_KL_bernoulli"], tkl, 3)
    close(r["T_KL_beta_gaussian"], tb, 2)
    close(r["T_KL_beta_gaussian_var_quarter"], tb4, 2)
    close(r["T_KL_gaussian"], tg, 2)
    close(r["T_KL_gaussian_min_beta"], tg, 2)
    close(r["beta_star_gaussian"], bstar, 4)
    close(r["eps_boundary"], epsb, 5)
    close(r["eps_boundary_no6"], ratio, 4)


# ----------------------------------- azize2023: optimal allocations ω*_KL and ω*_{KL,1/2} (eq. 25)
ALLOC = {
    "mu1": ((0.3573, 0.1600, 0.1600, 0.1600, 0.1600, 0.0026),
            (0.5000, 0.1247, 0.1247, 0.1247, 0.1247, 0.0012),
            (0.1957, 0.1957, 0.1957, 0.1957, 0.1957, 0.0217)),
    "mu1_k5": ((0.3904, 0.2021, 0.2021, 0.2021, 0.0031), (0.5000, 0.1662, 0.1662, 0.1662, 0.0015),
               (0.2432, 0.2432, 0.2432, 0.2432, 0.0270)),
    "mu2": ((0.3376, 0.1656, 0.1656, 0.1656, 0.1656), (0.5000, 0.1250, 0.1250, 0.1250, 0.1250),
            (0.2, 0.2, 0.2, 0.2, 0.2)),
    "mu3": ((0.0202, 0.0349, 0.0715, 0.3189, 0.5545), (0.0142, 0.0259, 0.0623, 0.3976, 0.5000),
            (0.0811, 0.1081, 0.1622, 0.3243, 0.3243)),
    "mu4": ((0.4569, 0.4338, 0.0660, 0.0279, 0.0154), (0.5000, 0.3976, 0.0623, 0.0259, 0.0142),
            (0.3243, 0.3243, 0.1622, 0.1081, 0.0811)),
    "mu5": ((0.4274, 0.3925, 0.0851, 0.0509, 0.0441), (0.5000, 0.3324, 0.0786, 0.0476, 0.0414),
            (0.2867, 0.2867, 0.1673, 0.1338, 0.1254)),
    "mu6": ((0.4926, 0.4862, 0.0167, 0.0034, 0.0011), (0.5000, 0.4802, 0.0158, 0.0030, 0.0010),
            (0.4126, 0.4126, 0.1032, 0.0458, 0.0258)),
}


@pytest.mark.parametrize("name", sorted(ALLOC))
def test_azize2023_allocations(rep004, name):
    w_kl, w_b, w_tv = ALLOC[name]
    r = rep004[name]
    for got, want in ((r["omega_KL_bernoulli"], w_kl), (r["omega_KL_beta_gaussian"], w_b),
                      (r["omega_TV"], w_tv)):
        assert len(got) == len(want) and sum(got) == pytest.approx(1.0, abs=1e-12)
        for x, v in zip(got, want):
            close(x, v, 4)


# --------------------- azize2023: lower bound T*(ν;ε)·ln(1/(3δ)) (Thm 2) and Thm 5's upper bound
# (instance, ε): max(T*_KL, T*_TV/(6ε)), Cor. 1 LB, T*(ν;ε), Thm 2 LB, Thm 5 slope, × ln(1/δ)
LOWER = {
    ("mu1", 0.01): (1703.704, 5974.1, 1703.704, 5974.1, 1.053e6, 4.85e6),
    ("mu1", 0.1): (473.236, 1659.4, 475.714, 1668.1, 1.390e5, 6.40e5),
    ("mu1", 1): (473.236, 1659.4, 473.236, 1659.4, 6.571e4, 3.03e5),
    ("mu1_k5", 0.01): (1370.370, 4805.3, 1370.370, 4805.3, 8.425e5, 3.88e6),
    ("mu1_k5", 0.1): (395.542, 1387.0, 398.017, 1395.7, 1.112e5, 5.12e5),
    ("mu1_k5", 1): (395.542, 1387.0, 395.542, 1387.0, 5.259e4, 2.42e5),
    ("mu2", 0.01): (1666.667, 5844.3, 1666.667, 5844.3, 1.496e5, 6.89e5),
    ("mu2", 0.1): (1424.747, 4996.0, 1424.747, 4996.0, 6.594e4, 3.04e5),
    ("mu2", 1): (1424.747, 4996.0, 1424.747, 4996.0, 6.402e4, 2.95e5),
    ("mu3", 0.01): (205.556, 720.8, 205.556, 720.8, 4.145e4, 1.91e5),
    ("mu3", 0.1): (20.556, 72.1, 20.556, 72.1, 4705, 2.17e4),
    ("mu3", 1): (11.430, 40.1, 11.430, 40.1, 1286, 5921),
    ("mu4", 0.01): (411.111, 1441.6, 411.111, 1441.6, 8.407e4, 3.87e5),
    ("mu4", 0.1): (122.843, 430.8, 125.296, 439.4, 1.081e4, 4.98e4),
    ("mu4", 1): (122.843, 430.8, 122.843, 430.8, 4764, 2.19e4),
    ("mu5", 0.01): (265.714, 931.7, 265.714, 931.7, 3.045e4, 1.40e5),
    ("mu5", 0.1): (46.377, 162.6, 49.345, 173.0, 3914, 1.80e4),
    ("mu5", 1): (46.377, 162.6, 46.377, 162.6, 1726, 7946),
    ("mu6", 0.01): (1631.870, 5722.2, 1823.154, 6393.0, 1.216e6, 5.60e6),
    ("mu6", 0.1): (1631.870, 5722.2, 1633.707, 5728.7, 1.563e5, 7.20e5),
    ("mu6", 1): (1631.870, 5722.2, 1631.870, 5722.2, 6.892e4, 3.17e5),
}


@pytest.mark.parametrize("key", sorted(LOWER))
def test_azize2023_lower_bounds_and_thm5(rep004, key):
    name, eps = key
    mx, cor1, tstar, thm2, slope, slope_ln = LOWER[key]
    row = next(b for b in rep004[name]["by_eps"] if b["eps"] == eps)
    close(row["cor1_max"], mx, 3)
    close(row["cor1_lower_bound"], cor1, 1)
    close(row["T_star_eps"], tstar, 3)
    close(row["thm2_lower_bound"], thm2, 1)
    sig(row["thm5_slope"], slope, 4)
    sig(row["thm5_slope"] * math.log(100), slope_ln, 3)
    assert row["regime"] == ("low privacy" if eps > rep004[name]["eps_boundary"]
                             else "high privacy")


def test_azize2023_section31_constants():
    close(math.log(1 / (3 * 0.01)), 3.506558, 6)
    close(C.constants("azize2023")["ln_1_over_3risk"], 3.506558, 6)
    close(float(A.kl_bernoulli(0.99, 0.01)), 4.503217, 6)


def test_azize2023_main_text_gk_claim_is_false_on_mu2(rep004):
    """The main text's claim "2T*_KL ≤ 8Σ_{a≠a*}Δ_a^{-2}" fails on μ2 (14 400 > 12 800), while the
    GK16 form H ≤ T*_KL ≤ 2H with the a* term holds."""
    r = rep004["mu2"]
    assert 2 * r["T_KL_gaussian"] == pytest.approx(14400)
    assert 8 * 4 / 0.05 ** 2 == pytest.approx(12800)
    assert r["H_gk16"] == pytest.approx(4000)
    assert r["H_gk16"] <= r["T_KL_gaussian"] <= 2 * r["H_gk16"]


# ---------------- azize2023: threshold magnitudes (eqs. (4), (14)) and C_G (eq. (15))
# k: c_{k·k}(Ñ,Ñ,δ/2), 2c_ε for ε = 0.01, 0.1, 1, 10, min |Δ̃| for the same ε (printed strings)
THRESH = {
    2: ("19.768", ("3.221e6", "3.229e4", "401.2", "82.29"), ("2538", "254.1", "28.33", "12.83")),
    4: ("23.853", ("1.073e6", "1.083e4", "202.8", "96.49"), ("732.6", "73.58", "10.07", "6.946")),
    8: ("28.396", ("8.635e4", "976", "122.2", "113.7"), ("51.95", "5.523", "1.954", "1.885")),
    12: ("31.246", ("6285", "186.6", "125.6", "125.0"), ("3.504", "0.6037", "0.4953", "0.4941")),
    16: ("33.340", ("554.4", "137.6", "133.4", "133.4"), ("0.2602", "0.1296", "0.1276", "0.1276")),
    20: ("34.999", ("168.1", "140.3", "140.0", "140.0"),
         ("0.03582", "0.03271", "0.03268", "0.03268")),
    24: ("36.374", ("147.4", "145.5", "145.5", "145.5"),
         ("0.008382", "0.00833", "0.008329", "0.008329")),
}


def printed(x, text):
    """x rounds to the printed string ``text`` (fixed or e-notation) in its last digit."""
    mant, _, exp = text.partition("e")
    decimals = len(mant.partition(".")[2])
    ulp = 10.0 ** (int(exp or 0) - decimals)
    assert abs(float(x) - float(text)) <= 0.5001 * ulp, (x, text)


def test_azize2023_threshold_magnitudes():
    r = C.constants("azize2023", {"eps": [0.01, 0.1, 1, 10]})
    assert r["threshold_K"] == 6 and r["s"] == 2.0
    rows = {row["k"]: row for row in r["thresholds"]}
    assert sorted(rows) == sorted(THRESH)
    for k, (ckk, two_c, gaps) in THRESH.items():
        row = rows[k]
        assert row["N_tilde"] == 2 ** (k - 2)
        printed(row["c_kk_half_risk"], ckk)
        assert [b["eps"] for b in row["by_eps"]] == [0.01, 0.1, 1, 10]
        for b, want_c, want_gap in zip(row["by_eps"], two_c, gaps):
            printed(b["two_c_eps"], want_c)
            printed(b["min_gap"], want_gap)


CG = {0.5: 1.964124, 1: 2.507095, 2: 3.582930, 3: 4.648365, 5: 6.757320, 10: 11.954646,
      20: 22.203253, 50: 52.588880}


def test_azize2023_cg_table():
    got = {row["x"]: row for row in C.constants("azize2023")["C_G"]}
    for x, v in CG.items():
        close(got[x]["C_G"], v, 6)
        assert got[x]["x_plus_ln_x"] == pytest.approx(x + math.log(x))
    # x + ln x is anti-conservative below ≈ 6.099 and larger above
    assert got[5]["x_plus_ln_x"] < got[5]["C_G"] and got[10]["x_plus_ln_x"] > got[10]["C_G"]


# ------------------------------------------------------------------ report structure and checks

@pytest.mark.parametrize("paper", registry.PAPERS)
def test_default_reports_are_json_and_all_checks_pass(paper):
    r = C.constants(paper)
    assert json.loads(json.dumps(r)) == r
    assert r["paper"] == paper and len(r["checks"]) >= 4
    for c in r["checks"]:
        assert set(c) >= {"name", "lhs", "rhs", "relation", "tol", "pass"}
        assert c["pass"], c


def test_check_flags_violations():
    assert not cross_check("x", 1.0, 1.0 + 1e-5)["pass"]
    assert cross_check("x", 1.0, 1.0 + 1e-7)["pass"]
    assert not cross_check("x", 1.0, 2.0, ">=")["pass"] and cross_check("x", 2.0, 1.0, ">=")["pass"]
    assert not cross_check("x", 2.0, 1.0, "<=")["pass"]
    assert not cross_check("x", 1e-3, 0.0, "<=", 1e-6, absolute=True)["pass"]


def test_004_checks_cover_issue_cross_checks():
    names = [c["name"] for c in C.constants("azize2023")["checks"]]
    for needle in ("closed form (Prop. 1) == LP", "sqrt(2 T_KL)", "GK procedure == direct SLSQP",
                   "min over beta", "(Cor. 1)"):
        assert any(needle in n for n in names), needle


def test_004_custom_means_and_pinsker_direction():
    r = C.constants("azize2023", {"means": [0.5, 0.4, 0.2], "eps": 0.5})
    assert r["instance"] == "custom" and len(r["by_eps"]) == 1
    pins = next(c for c in r["checks"] if "Pinsker" in c["name"])
    assert pins["relation"] == ">=" and pins["lhs"] == r["T_TV"]
    assert pins["rhs"] == pytest.approx(math.sqrt(2 * r["T_KL_bernoulli"]))
    assert all(c["pass"] for c in r["checks"])


# ---------------------------------------------------------------- chen2024 via the report

def test_000_section5_instance():
    r = C.constants("chen2024", {"T": 1000})
    assert (r["K"], r["d"], r["c"]) == (30, 2, 1)
    close(r["lambda"], 128.7640, 4)
    assert r["h"] == [29, 0] and r["M1"] == 1 and r["M"] == 1
    assert r["s"][1] == 30 and r["s"][-1] == 1 and r["T_prime"] == 998
    by = {b["eps"]: b for b in r["by_eps"]}
    for eps, hb, hp, h in ((0.1, 1270.24, 712.81, 1983.05), (1.0, 1270.24, 71.28, 1341.52),
                           (10.0, 1270.24, 7.13, 1277.37)):
        close(by[eps]["H_BAI"], hb, 2)
        close(by[eps]["H_pri"], hp, 2)
        close(by[eps]["H"], h, 2)
    rb = C.constants("chen2024", {"T": 1000, "reading": "B"})
    assert rb["M1"] == 2 and rb["M"] == 2 and rb["s"][1:] == [30, 1, 1] and rb["T_prime"] == 996


def test_000_section5_bound_16_table():
    """Worked example (a) of Chen et al. (2024): eq. (16) exp(−T'/(65·M·H)) on the Sec. 5 instance for
    T = 500 / 1000 / 2000 / 5000 at ε = 0.1, 1, 10 (vacuous: all above 0.94)."""
    table = {0.1: (0.9961, 0.9923, 0.9846, 0.9620), 1.0: (0.9943, 0.9886, 0.9773, 0.9443),
             10.0: (0.9940, 0.9881, 0.9762, 0.9416)}
    for j, T in enumerate((500, 1000, 2000, 5000)):
        by = {b["eps"]: b for b in C.constants("chen2024", {"T": T})["by_eps"]}
        for eps, row in table.items():
            assert abs(by[eps]["thm42_bound_16"] - row[j]) <= 5e-5, (T, eps)


def test_000_k_armed_and_appendix_examples():
    r = C.constants("chen2024", {"means": [0.5, 0.45, 0.40, 0.35, 0.30], "d": 5, "T": 500})
    assert r["lambda"] == 2 and r["M1"] == 1 and r["M"] == 3 and r["s"][1:] == [5, 3, 2, 1]
    assert r["T_prime"] == 481
    by = {b["eps"]: b for b in r["by_eps"]}
    assert by[1.0]["H_BAI"] == pytest.approx(800)
    for eps, h in ((0.1, 1200), (1.0, 840), (10.0, 804)):
        assert by[eps]["H_pri"] == pytest.approx(40 / eps) and by[eps]["H"] == pytest.approx(h)
    a = C.constants("chen2024", {"K": 10000, "d": 16, "T": 100000})
    close(a["lambda"], 27.6496, 4)
    assert a["h"] == [9936, 359, 13, 0] and a["M1"] == 3 and a["M"] == 8
    assert a["s"][1:] == [10000, 423, 77, 32, 16, 8, 4, 2, 1] and a["T_prime"] == 100000 - 368
    b = C.constants("chen2024", {"K": 10000, "d": 16, "T": 100000, "reading": "B"})
    assert b["M1"] == 4 and b["M"] == 9 and b["s"][4] == 64 and b["T_prime"] == 100000 - 384
    e2 = C.constants("chen2024", {"K": 2, "d": 2, "T": 50})
    assert (e2["c"], e2["lambda"], e2["M1"], e2["M"], e2["T_prime"]) == (1, 2, 1, 1, 48)
    assert all(c["pass"] for c in r["checks"] + a["checks"] + b["checks"] + e2["checks"])


# ------------------------------------------------------------- barbara2025 via the report

def test_001_instance_a():
    r = C.constants("barbara2025")
    close(r["H"], 441.877, 3)
    by = {b["eps"]: b for b in r["by_eps"]}
    for eps, c, h_e in ((0.5, 0.244919, 7366.43), (1.0, 0.462117, 2069.17),
                        (2.0, 0.761594, 761.822)):
        close(by[eps]["c_eps"], c, 6)
        sig(by[eps]["H_eps"], h_e, 6)
        assert by[eps]["tau_eps"] == 0.5
    for x, v in zip(by[0.5]["mu_eps"], (0.402033, 0.451016, 0.5, 0.548984, 0.597967)):
        close(x, v, 6)
    close(by[0.5]["zeta_eps"], 0.0122459, 7)
    for x, v in zip(by[1.0]["delta_eps"], (0.207953, 0.115529, 0.0231059, 0.115529, 0.207953)):
        sig(x, v, 6)


def test_001_instances_b_and_c():
    b = C.constants("barbara2025", {"means": [0.2, 0.45, 0.55, 0.8], "threshold": 0.5, "tolerance": 0})
    close(b["H"], 822.222, 3)
    for got, want in zip(b["by_eps"], (13707.1, 3850.22, 1417.56)):
        sig(got["H_eps"], want, 6)
    c = C.constants("barbara2025", {"means": [0.1, 0.4, 0.65, 0.9], "threshold": 0.6, "tolerance": 0.1})
    close(c["H"], 64.5833, 4)
    by = {e["eps"]: e for e in c["by_eps"]}
    close(by[0.5]["tau_eps"], 0.524492, 6)
    sig(by[1.0]["H_eps"], 302.424, 6)
    sig(by[2.0]["H_eps"], 111.346, 6)
    c0 = C.constants("barbara2025", {"means": [0.1, 0.4, 0.65, 0.9], "threshold": 0.6, "tolerance": 0,
                             "eps": 1})
    close(c0["H"], 440.111, 3)
    sig(c0["by_eps"][0]["H_eps"], 2060.91, 6)
    assert all(x["pass"] for x in b["checks"] + c["checks"] + c0["checks"])


# ------------------------------------------------------------------ input errors

@pytest.mark.parametrize("call, needle", [
    (lambda: C.constants("005"), "paper='005'"),
    (lambda: C.constants("azize2023", {"instance": "mu9"}), "instance='mu9'"),
    (lambda: C.constants("azize2023", {"eps": 0}), "eps=0"),
    (lambda: C.constants("azize2023", {"risk": 1.5}), "risk=1.5"),
    (lambda: C.constants("chen2024", {"reading": "C"}), "reading='C'"),
    (lambda: C.constants("chen2024", {"T": 0}), "T=0"),
    (lambda: A.t_tv([0.5, 0.5, 0.1]), "unique best arm"),
    (lambda: A.t_kl([0.5, 1.2]), "means[1]=1.2"),
    (lambda: A.t_kl([0.5]), "at least 2"),
    (lambda: A.t_kl_beta([0.5, 0.2], beta=1.0), "beta=1.0"),
    (lambda: A.t_star_eps([0.5, 0.2], -1), "eps=-1"),
    (lambda: A.t_tv([0.5, 0.2], family="poisson"), "family='poisson'"),
    (lambda: A.threshold_row(1, [1.0]), "k=1"),
])
def test_input_errors(call, needle):
    with pytest.raises(InputError) as e:
        call()
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and ("expected" in msg)


# ------------------------------------------------------------------ closed form vs numerical

@st.composite
def instances(draw, lo=0.0, hi=1.0, min_gap=1e-3):
    K = draw(st.integers(2, 7))
    mu = draw(st.lists(st.floats(lo, hi, allow_nan=False, allow_subnormal=False),
                       min_size=K, max_size=K))
    s = sorted(mu, reverse=True)
    assume(s[0] - s[1] >= min_gap)
    return mu


def _rel(a, b):
    return abs(a - b) / max(abs(a), abs(b))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(instances(), st.sampled_from(A.FAMILIES), st.floats(0.05, 4.0))
def test_tv_closed_form_equals_lp(mu, family, sigma2):
    T, w = A.t_tv(mu, family, sigma2)
    T_lp, w_lp = A.t_tv_lp(mu, family, sigma2)
    assert _rel(T, T_lp) <= 1e-6
    assert np.max(np.abs(w - w_lp)) <= 1e-6
    # the value of the optimum is attained by the allocation (1/T = objective at ω)
    assert _rel(1 / T, A.tv_objective(mu, w, family, sigma2)) <= 1e-9
    if family == "bernoulli":    # Proposition 1's bounds and Pinsker (Sec. 3)
        g = sorted(max(mu) - np.asarray(mu))[1]
        assert 1 / g <= T * (1 + 1e-12) and T <= len(mu) / g * (1 + 1e-12)
        assert T >= math.sqrt(2 * A.t_kl(mu)[0]) * (1 - 1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, derandomize=True)
@given(instances())
def test_bernoulli_tkl_root_finding_equals_direct_optimisation(mu):
    T, w = A.t_kl(mu)
    T_num, w_num = A.t_kl_epigraph(mu)
    assert _rel(T, T_num) <= 1e-6
    assert _rel(1 / T, A.kl_objective(mu, w)) <= 1e-9
    assert abs(w.sum() - 1) <= 1e-12 and np.all(w > 0)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, derandomize=True)
@given(instances(-3.0, 3.0, 1e-2), st.floats(0.1, 4.0))
def test_gaussian_tkl_root_finding_equals_beta_minimisation(mu, sigma2):
    T, w = A.t_kl(mu, "gaussian", sigma2)
    T_beta, beta, w_beta = A.t_kl_gaussian_min_beta(mu, sigma2)
    T_num, _ = A.t_kl_epigraph(mu, "gaussian", sigma2)
    assert _rel(T, T_beta) <= 1e-6
    assert _rel(T, T_num) <= 1e-6
    assert abs(beta - w[int(np.argmax(mu))]) <= 1e-4


@settings(max_examples=100, deadline=None, derandomize=True)
@given(instances(-3.0, 3.0, 1e-2), st.floats(0.02, 0.98))
def test_beta_allocation_equalises_the_ratios(mu, beta):
    """Eq. (25): at ω*_{KL,β} every Δ_a²/(1/β + 1/ω_a) equals 2/T*_{KL,β}; ω_{a*} = β."""
    T, w = A.t_kl_beta(mu, beta)
    mu = np.asarray(mu)
    a = int(np.argmax(mu))
    others = [b for b in range(mu.size) if b != a]
    ratios = [(mu[a] - mu[b]) ** 2 / (1 / beta + 1 / w[b]) for b in others]
    assert w[a] == beta and abs(w.sum() - 1) <= 1e-9
    assert max(_rel(r, 2 / T) for r in ratios) <= 1e-6
    # and T_{KL,β} is never below the optimal Gaussian T*_KL
    assert T >= A.t_kl(mu, "gaussian")[0] * (1 - 1e-9)


@pytest.mark.parametrize("gap, sigma2", [(0.1, 1.0), (1.0, 1.0), (0.5, 0.25), (3.0, 4.0)])
def test_tv_of_gap_matches_numerical_integral(gap, sigma2):
    """f(Δ) = TV of a mean shift: Bernoulli |p − q|; Gaussian
    ½∫|φ_σ(x) − φ_σ(x − Δ)|dx, by quadrature."""
    from scipy.integrate import quad
    from scipy.stats import norm
    sd = math.sqrt(sigma2)
    tv, _ = quad(lambda x: 0.5 * abs(norm.pdf(x, 0, sd) - norm.pdf(x, gap, sd)), -60 * sd,
                 60 * sd + gap, points=[gap / 2], limit=200)
    assert float(A.tv_of_gap(gap, "gaussian", sigma2)) == pytest.approx(tv, rel=1e-8)
    assert float(A.tv_of_gap(gap / 4, "bernoulli")) == gap / 4


@pytest.mark.parametrize("old", sorted(registry.OLD_PAPER_KEYS))
def test_the_old_paper_numbers_still_work_with_a_warning_naming_the_new_key(old):
    new = registry.OLD_PAPER_KEYS[old]
    with pytest.warns(FutureWarning, match=f"use '{new}'"):
        assert registry.paper_key(old) == new
    assert registry.paper_key(new) == new
    with pytest.raises(InputError, match="paper='999'.*azize2023, barbara2025, chen2024"):
        registry.paper_key("999")
